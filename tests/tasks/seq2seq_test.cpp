// Sequence to sequence: seed 003's toy translation learned exactly with every score, and one scoring
// path for validation and evaluate.
#include <cmath>

#include "attn/tasks/seq2seq.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

namespace {
const std::vector<std::pair<std::string, std::string>> kPairs = {
    {"hello", "hola"}, {"how are you", "cómo estás"}, {"good morning", "buenos días"}};

std::string toy_csv(const fs::path& dir) {
  std::vector<std::string> rows;
  for (int i = 0; i < 20; ++i)
    for (const auto& [s, t] : kPairs) rows.push_back(s + "," + t);
  return write_csv(dir / "toy.csv", "source,target", rows);
}
}  // namespace

TEST_CASE("seq2seq-attention learns seed 003's toy pairs exactly, with every score", "[tasks][seq2seq][slow]") {
  const fs::path dir = scratch("toy");
  const std::string csv = toy_csv(dir);
  std::vector<std::pair<std::string, std::string>> configs;
  for (const char* score : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) configs.push_back({score, "bahdanau"});
  configs.push_back({"general", "luong"});
  configs.push_back({"dot", "luong"});
  for (const auto& [score, style] : configs) {
    INFO(style << " / " << score);
    const std::string run = (dir / (score + "-" + style)).string();
    train_run("seq2seq-attention", run, {{"csv", csv}}, {{"score", score}, {"style", style}, {"units", 32}, {"embed_dim", 16}},
          {{"epochs", 30}, {"batch_size", 12}, {"val_split", 0.0}, {"lr", 0.01}});
    const auto model = tasks::open_model(run);
    std::vector<tasks::Input> inputs;
    for (const auto& p : kPairs) inputs.push_back({p.first, {}});
    const auto out = model->explain(inputs);
    const auto predicted = model->predict(inputs, 2);
    if (score == "additive") {  // beam search finds the pairs too
      data::Inputs beam;
      beam.set("beam", "4", data::Inputs::Origin::kGiven);
      model->configure(beam);
      const auto wide = model->explain(inputs);
      for (std::size_t i = 0; i < kPairs.size(); ++i) CHECK(wide->json(i).at("output") == kPairs[i].second);
      beam.set("beam", "0", data::Inputs::Origin::kGiven);
      CHECK_THROWS_AS(model->configure(beam), std::invalid_argument);
    }
    for (std::size_t i = 0; i < kPairs.size(); ++i) {
      const auto j = out->json(i);
      CHECK(j.at("output") == kPairs[i].second);
      CHECK(predicted[i].at("output") == kPairs[i].second);
      REQUIRE(j.at("attention").size() == j.at("output_tokens").size() * j.at("source_tokens").size());
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("seq2seq: evaluate on a run's validation rows reproduces its last validation metrics", "[tasks][seq2seq][evaluate]") {
  const fs::path dir = scratch("s2s_eval");
  std::vector<std::string> rows;
  for (int i = 0; i < 200; ++i) rows.push_back(std::to_string(i) + "," + std::to_string(i * 7 % 1000));
  const std::string csv = write_csv(dir / "numbers.csv", "n,m", rows);
  const auto last = train_run("seq2seq-attention", (dir / "run").string(), {{"csv", csv}, {"source-column", "n"}, {"target-column", "m"}},
                          {{"units", 8}, {"embed_dim", 4}}, {{"epochs", 2}, {"batch_size", 16}, {"val_split", 0.25}, {"lr", 0.01}, {"seed", 1}});
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs none;
  const auto data = model->open_csv(write_csv(dir / "val.csv", "n,m", std::vector<std::string>(rows.end() - 50, rows.end())), none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {5, tasks::EvaluateOptions::Detail::kFull});
  for (const char* key : {"loss", "accuracy", "exact_match", "char_accuracy"})
    CHECK(std::abs(e.metrics.at(key).get<double>() - last.at(std::string("val_") + key).get<double>()) <= 1e-6);
  CHECK(e.metrics.at("rows").get<int>() == last.at("val_rows").get<int>());
  bool same = false;  // shared by two workers, each decoding half the rows
  const auto shared = shared_metrics(*data, (dir / "run").string(), tasks::all_rows(data->rows()), 5, &same);
  CHECK(same);
  for (const char* key : {"loss", "accuracy", "exact_match", "char_accuracy"})
    CHECK(std::abs(shared.at(key).get<double>() - e.metrics.at(key).get<double>()) <= 1e-6);
  CHECK_THAT(e.predictions_csv, Catch::StartsWith("source,target,prediction\n\"150\",\"50\","));
  fs::remove_all(dir);
}
