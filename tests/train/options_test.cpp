// The training settings' table: every row's flag, field and JSON key agree, values round-trip, bad
// values name their flag, and each model's recipe is made of the table's keys.
#include <set>

#include <catch2/catch.hpp>

#include "attn/analyses/commands.h"
#include "attn/models/registry.h"
#include "attn/train/options.h"
#include "attn/train/run.h"

using namespace attn;

namespace {

/// A value other than the default for every flag, as a user would type it. A new row needs one
/// here (the first test fails until it has one).
const std::map<std::string, std::string> kSamples = {
    {"epochs", "7"},
    {"batch-size", "48"},
    {"lr", "0.02"},
    {"val-split", "0.25"},
    {"seed", "11"},
    {"no-bucket", ""},
    {"no-sparse-gradients", ""},
    {"early-stopping-patience", "3"},
    {"monitor", "val_mean_auc"},
    {"lr-schedule", "cosine"},
    {"lr-factor", "0.5"},
    {"lr-patience", "4"},
    {"min-lr", "0.001"},
    {"warmup-steps", "100"},
    {"clip-norm", "1.5"},
    {"pos-weight", "auto"},
    {"class-weight", "balanced"},
    {"span-f1-loss", "0.5"},
    {"embeddings", "glove.txt"},
    {"freeze-embeddings", ""},
    {"pretrain-epochs", "12"},
    {"logit-adjustment", "macro-f1"},
    {"ensemble", "3"},
};

}  // namespace

TEST_CASE("the training table: flag -> field -> JSON -> field round-trips for every row", "[train][options]") {
  std::set<std::string> keys;
  for (const train::TrainOption& row : train::train_options()) {
    INFO(row.key);
    CHECK(keys.insert(row.key).second);  // each key once
    if (row.flag.empty()) continue;      // --threads: every app's own flag
    // The key is the flag with dashes as underscores; a negated flag is keyed by what it turns off.
    std::string dashed = row.key;
    for (char& c : dashed) c = c == '_' ? '-' : c;
    CHECK((row.kind == train::TrainOption::Kind::kNegatedFlag ? "no-" + dashed : dashed) == row.flag);
    REQUIRE(kSamples.count(row.flag) == 1);
    data::Inputs in;
    in.set(row.flag, kSamples.at(row.flag), data::Inputs::Origin::kGiven);
    const nlohmann::json given = train::training_overrides(in);
    REQUIRE(given.size() == 1);
    nlohmann::json overrides = given;
    if (row.key == "freeze_embeddings") overrides["embeddings"] = "glove.txt";  // it needs them
    const train::TrainOptions o = train::effective_options(nlohmann::json::object(), overrides);
    CHECK(row.get(o) == given.at(row.key));
    CHECK(row.get(o) != row.get(train::TrainOptions{}));  // the sample is not the default: the field was set
    const nlohmann::json j = o;
    CHECK(j.at(row.key) == given.at(row.key));
    CHECK(row.get(j.get<train::TrainOptions>()) == given.at(row.key));
    if (row.kind == train::TrainOption::Kind::kValue) CHECK_THAT(row.help, Catch::Contains("(default: "));
  }
  CHECK(keys.size() == nlohmann::json(train::TrainOptions{}).size());  // every field has a row
  const auto specs = train::training_inputs();
  CHECK(specs.size() == keys.size() - 1);  // all but --threads
}

TEST_CASE("the training table: bad values name their flag, schedules are a closed set", "[train][options]") {
  data::Inputs in;
  in.set("epochs", "many", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(train::training_overrides(in), "--epochs must be a whole number, got 'many'");
  data::Inputs schedule;
  schedule.set("lr-schedule", "triangle", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(train::training_overrides(schedule),
                    "--lr-schedule must be constant, reduce-on-plateau, warmup-linear or cosine, got 'triangle'");
  CHECK_THROWS_WITH(train::effective_options({}, {{"epochs", 0}}), "--epochs must be >= 1, got 0");
  CHECK_THROWS_WITH(train::effective_options({}, {{"span_f1_loss", -1}}), Catch::Contains("--span-f1-loss must be a number >= 0"));
  CHECK_THROWS_WITH(train::effective_options({}, {{"lr_schedule", "triangle"}}),
                    Catch::Contains("training setting") && Catch::Contains("triangle"));
  CHECK_THROWS_WITH(train::effective_options({}, {{"epochz", 3}}), "no training setting 'epochz'");
  CHECK_THROWS_WITH(train::effective_options({}, {{"freeze_embeddings", true}}), "--freeze-embeddings needs --embeddings");
  CHECK(train::monitor_mode("val_loss") == train::MonitorMode::kMinimize);
  CHECK(train::monitor_mode("val_mean_auc") == train::MonitorMode::kMaximize);
}

TEST_CASE("every model's training recipe is made of the table's settings, and attn models prints them as flags", "[train][options]") {
  const std::string described = analyses::describe_models(train::training_flags);
  for (const auto& entry : models::models()) {
    INFO(entry.name);
    CHECK_NOTHROW(train::effective_options(entry.training, nlohmann::json::object()));
    CHECK_THAT(described, Catch::Contains(entry.name + "  (task: "));
  }
  CHECK_THAT(described, Catch::Contains("training defaults: --epochs 16 --batch-size 128 --lr 0.001 --val-split 0.3"));
}
