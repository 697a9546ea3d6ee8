// Training runs: the registry's training defaults, flags over them, typed config.json, resume rules.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/train/run.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attn_run_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string feature_csv(const fs::path& dir, int rows) {
  std::ofstream f(dir / "f.csv");
  f << "a,b,label\n";
  for (int i = 0; i < rows; ++i) f << (i % 7) * 0.1 << "," << (i % 3) - 1 << "," << (i % 3 == 2 ? 1 : 0) << "\n";
  return (dir / "f.csv").string();
}

train::TrainRequest request(const std::string& model, const std::string& out, const std::string& csv) {
  train::TrainRequest r;
  r.model = model;
  r.out_dir = out;
  r.data.set("csv", csv, data::Inputs::Origin::kGiven);
  r.data.set("label-column", "label", data::Inputs::Origin::kDefault);
  r.training = {{"threads", 1}};
  return r;
}

}  // namespace

TEST_CASE("with no training flags a run takes its model's recipe, flags override it", "[train][run]") {
  const auto dir = scratch("defaults");
  const std::string csv = feature_csv(dir, 100);
  train::TrainRequest r = request("feature-attention", (dir / "a").string(), csv);
  const auto planned = train::planned_config(r);
  CHECK(planned.at("training").at("epochs") == 16);  // seed 001's model.fit(epochs=16, batch_size=128, validation_split=0.3)
  CHECK(planned.at("training").at("batch_size") == 128);
  CHECK(planned.at("training").at("val_split") == 0.3);
  CHECK(planned.at("task") == "feature-classification");
  r.training["epochs"] = 2;
  r.training["batch_size"] = 16;
  const train::TrainingRun run = train::TrainingRun::start(r);
  CHECK(run.config().training.epochs == 2);
  CHECK(run.config().training.batch_size == 16);
  CHECK(run.config().training.val_split == 0.3);
  CHECK(run.config().model_config.at("features") == 2);  // fitted to the data
  const auto written = nlohmann::json::parse(io::read_file((dir / "a" / "config.json").string())).get<train::RunConfig>();
  CHECK(written.data.at("features") == nlohmann::json{"a", "b"});
  CHECK(written.data.at("csv") == fs::absolute(dir / "a" / "data" / "f.csv").string());
  CHECK(train::planned_config(request("bilstm-attention", "", "")).at("training").at("batch_size") == 512);  // seed 000's
  fs::remove_all(dir);
}

TEST_CASE("bad settings are std::invalid_argument before any file is written", "[train][run]") {
  const auto dir = scratch("bad");
  const std::string csv = feature_csv(dir, 50);
  train::TrainRequest r = request("feature-attention", (dir / "x").string(), csv);
  r.training["lr"] = 0.0;
  CHECK_THROWS_WITH(train::TrainingRun::start(r), Catch::Contains("--lr must be > 0"));
  r = request("feature-attention", (dir / "x").string(), csv);
  r.model_overrides = {{"hidden", {0}}};
  CHECK_THROWS_AS(train::TrainingRun::start(r), std::invalid_argument);
  r = request("feature-attention", (dir / "x").string(), csv);
  r.data.set("text-column", "t", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(train::TrainingRun::start(r), "--text-column does not apply to feature-attention (a feature-classification model)");
  CHECK_FALSE(fs::exists(dir / "x"));
  fs::remove_all(dir);
}

TEST_CASE("resume: the run's own settings, more epochs allowed, a changed data file refused", "[train][run]") {
  const auto dir = scratch("resume");
  const std::string csv = feature_csv(dir, 60);
  train::TrainRequest r = request("feature-attention", (dir / "run").string(), csv);
  r.training["epochs"] = 1;
  {
    train::TrainingRun run = train::TrainingRun::start(r);
    std::atomic<bool> stop{false};
    REQUIRE(run.train(stop, nullptr, nullptr));
  }
  CHECK_THROWS_WITH(train::TrainingRun::resume((dir / "run").string(), {{"lr", 0.5}}), Catch::Contains("only --epochs may change"));
  {
    train::TrainingRun run = train::TrainingRun::resume((dir / "run").string(), {{"epochs", 2}});
    CHECK(run.epochs_done() == 1);
    std::atomic<bool> stop{false};
    REQUIRE(run.train(stop, nullptr, nullptr));
    CHECK(run.epochs_done() == 2);
  }
  feature_csv(dir / "run" / "data", 61);  // the run's copy of its CSV changes
  CHECK_THROWS_WITH(train::TrainingRun::resume((dir / "run").string(), nlohmann::json::object()), Catch::Contains("data.rows was 60") && Catch::Contains("changed since"));
  io::write_file_atomic((dir / "run" / "config.json").string(), "{\"model\": 3}");
  CHECK_THROWS_WITH(train::TrainingRun::resume((dir / "run").string(), nlohmann::json::object()), Catch::Contains("config.json: not a run configuration"));
  fs::remove_all(dir);
}
