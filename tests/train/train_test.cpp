#include <atomic>
#include <iomanip>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "attn/data/prepare.h"
#include "attn/data/toxic_corpus.h"
#include "attn/models/registry.h"
#include "attn/train/batching.h"
#include "attn/train/metrics.h"
#include "attn/train/trainer.h"

using namespace attn;

TEST_CASE("roc_auc: hand-computed cases, ties, a missing class", "[train][metrics]") {
  CHECK(train::roc_auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == Approx(0.75));
  CHECK(train::roc_auc({0.5f, 0.5f, 0.9f}, {0, 1, 1}) == Approx(0.75));  // tie counts half
  CHECK(train::roc_auc({0.9f, 0.1f}, {0, 1}) == Approx(0.0));
  CHECK(std::isnan(train::roc_auc({0.2f, 0.3f}, {1, 1})));
}

TEST_CASE("evaluate: log loss, accuracy, skipped rows, mean over defined AUCs", "[train][metrics]") {
  // two labels, three rows; row 2 skipped
  const std::vector<float> p = {0.9f, 0.2f, 0.3f, 0.6f, 0.5f, 0.5f};
  const std::vector<float> y = {1, 0, 0, 1, 1, 1};
  const auto e = train::evaluate(p, y, 2, {true, true, false});
  CHECK(e.rows == 2);
  const double expected_loss = -(std::log(0.9) + std::log(0.8) + std::log(0.7) + std::log(0.6)) / 4;
  CHECK(e.loss == Approx(expected_loss));
  CHECK(e.accuracy == Approx(1.0));
  CHECK(e.auc[0] == Approx(1.0));
  CHECK(e.mean_auc == Approx(1.0));
}

TEST_CASE("make_batches: every row once; buckets hold similar lengths; seeded", "[train][batching]") {
  std::vector<std::int64_t> lengths, rows;
  for (int i = 0; i < 1000; ++i) {
    lengths.push_back((i * 37) % 200);
    rows.push_back(i);
  }
  const auto a = train::make_batches(rows, lengths, 64, true, true, 7);
  const auto b = train::make_batches(rows, lengths, 64, true, true, 7);
  const auto c = train::make_batches(rows, lengths, 64, true, true, 8);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<int> seen(1000, 0);
  for (const auto& batch : a) {
    std::int64_t lo = 1000, hi = -1;
    for (auto r : batch) {
      ++seen[static_cast<std::size_t>(r)];
      lo = std::min(lo, lengths[static_cast<std::size_t>(r)]);
      hi = std::max(hi, lengths[static_cast<std::size_t>(r)]);
    }
    CHECK(hi - lo <= 15);  // 64 of 1000 rows spread over 200 lengths: a narrow band
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("registry: one list, config defaults and overrides, clear errors", "[train][registry]") {
  CHECK_THROWS_WITH(models::find_model("gpt"), Catch::Contains("unknown model 'gpt'") && Catch::Contains("bilstm-attention"));
  const auto& entry = models::find_model("bilstm-attention");
  const auto config = models::resolve_config(entry, {{"lstm_units", 30}});
  CHECK(config["lstm_units"] == 30);
  CHECK(config["embed_dim"] == 128);
  CHECK_THROWS_WITH(models::resolve_config(entry, {{"lstm_unit", 30}}), Catch::Contains("no config key 'lstm_unit'"));
  CHECK_THROWS_WITH(models::resolve_config(entry, {{"lstm_units", "many"}}), Catch::Contains("expects a value like 60"));
  CHECK(models::parse_assignment("spatial_dropout=0.2") == nlohmann::json{{"spatial_dropout", 0.2}});
  CHECK_THROWS(models::parse_assignment("novalue"));
}

TEST_CASE("bilstm-attention: shapes, masked padding, the seed's parameter layout", "[train][model]") {
  const auto& entry = models::find_model("bilstm-attention");
  torch::jit::Module m = entry.build(models::resolve_config(entry, {{"num_words", 50}, {"labels", 3}, {"embed_dim", 8}, {"lstm_units", 4}}));
  m.eval();
  const torch::Tensor ids = torch::tensor({{0, 0, 5, 7, 9}, {3, 4, 1, 2, 8}}, torch::kInt64);
  const auto out = m.forward({ids}).toTuple();
  const torch::Tensor probs = out->elements()[0].toTensor(), att = out->elements()[1].toTensor();
  CHECK(probs.sizes() == torch::IntArrayRef({2, 3}));
  CHECK(att.sizes() == torch::IntArrayRef({2, 5}));
  CHECK(att[0][0].item<float>() == 0.0f);
  CHECK(att[0][1].item<float>() == 0.0f);
  CHECK(att.sum(1)[0].item<float>() == Approx(1.0f));
  CHECK(((probs > 0) & (probs < 1)).all().item<bool>());
  // Padding (pre or post) and batch mates change nothing: the LSTM skips padding.
  const auto alone = m.forward({torch::tensor({{5, 7, 9}}, torch::kInt64)}).toTuple();
  const torch::Tensor post = torch::tensor({{5, 7, 9, 0, 0}, {3, 4, 1, 2, 8}}, torch::kInt64);
  const auto batched = m.forward({post}).toTuple();
  CHECK(torch::allclose(alone->elements()[0].toTensor()[0], probs[0], 1e-5, 1e-6));
  CHECK(torch::allclose(alone->elements()[0].toTensor()[0], batched->elements()[0].toTensor()[0], 1e-5, 1e-6));
  CHECK(torch::allclose(alone->elements()[1].toTensor()[0], att[0].slice(0, 2), 1e-5, 1e-6));
  std::vector<std::string> names;
  for (const auto& p : m.named_parameters(true)) names.push_back(p.name);
  CHECK(names.front() == "embedding");
  CHECK(std::find(names.begin(), names.end(), "lstm.weight_hh_l0_reverse") != names.end());
  CHECK(std::find(names.begin(), names.end(), "attention.context.weight") != names.end());
  CHECK(names.back() == "dense.bias");
}

namespace {

/// A small prepared corpus from the toxic generator, as a training task.
std::unique_ptr<train::Task> tiny_data() {
  const auto dir = std::filesystem::temp_directory_path() / ("attn_train_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string csv = (dir / "toxic.csv").string();
  {
    std::ofstream f(csv, std::ios::binary);
    data::write_toxic_corpus(f, data::ToxicCorpusOptions{400, 3, 0.0});
  }
  data::PrepareOptions o;
  o.csv = csv;
  o.pad.maxlen = 60;
  o.threads = 2;
  auto prepared = data::prepare_csv(o);
  std::filesystem::remove_all(dir);
  return train::text_task(std::move(prepared.data), std::move(prepared.tokenizer));
}

torch::jit::Module tiny_model() {
  torch::manual_seed(5);
  const auto& entry = models::find_model("bilstm-attention");
  return entry.build(models::resolve_config(entry, {{"num_words", 20000}, {"embed_dim", 8}, {"lstm_units", 4}}));
}

train::TrainOptions tiny_options() {
  train::TrainOptions t;
  t.epochs = 2;
  t.batch_size = 32;
  t.seed = 11;
  return t;
}

}  // namespace

TEST_CASE("Trainer: same seed, same metrics; an interrupted run resumes exactly", "[train][trainer]") {
  const auto task = tiny_data();
  const train::Task& data = *task;
  std::atomic<bool> never{false};
  std::vector<double> losses[2];
  for (int run = 0; run < 2; ++run) {
    train::Trainer t(tiny_model(), data, tiny_options());
    REQUIRE(t.run(never, nullptr, [&](const train::EpochRecord& e) {
      losses[run].push_back(e.loss);
      losses[run].push_back(e.validation.at("loss").get<double>());
    }));
  }
  CHECK(losses[0] == losses[1]);
  REQUIRE(losses[0].size() == 4);
  CHECK(losses[0][2] < losses[0][0]);  // it learns

  // Stop in the middle of epoch 1, checkpoint, resume in a new trainer.
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt_" + std::to_string(::getpid()) + ".pt")).string();
  std::atomic<bool> stop{false};
  int batches = 0;
  {
    train::Trainer t(tiny_model(), data, tiny_options());
    CHECK_FALSE(t.run(stop, [&](const train::Progress&) { if (++batches == 4) stop = true; }, nullptr));
    t.save_checkpoint(ckpt);
  }
  std::vector<double> resumed;
  train::Trainer t(tiny_model(), data, tiny_options());
  t.load_checkpoint(ckpt);
  std::remove(ckpt.c_str());
  REQUIRE(t.run(never, nullptr, [&](const train::EpochRecord& e) {
    resumed.push_back(e.loss);
    resumed.push_back(e.validation.at("loss").get<double>());
  }));
  for (std::size_t i = 0; i < resumed.size(); ++i) UNSCOPED_INFO(i << ": " << std::setprecision(17) << resumed[i] << " vs " << losses[0][i]);
  CHECK(resumed == losses[0]);
}

TEST_CASE("Trainer: a checkpoint of another model is refused with the path", "[train][trainer]") {
  const auto task = tiny_data();
  const train::Task& data = *task;
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt2_" + std::to_string(::getpid()) + ".pt")).string();
  train::Trainer(tiny_model(), data, tiny_options()).save_checkpoint(ckpt);
  const auto& entry = models::find_model("bilstm-attention");
  train::Trainer other(entry.build(models::resolve_config(entry, {{"embed_dim", 8}, {"lstm_units", 5}})), data, tiny_options());
  CHECK_THROWS_WITH(other.load_checkpoint(ckpt), Catch::Contains(ckpt) && Catch::Contains("shape"));
  CHECK_THROWS_WITH(other.load_checkpoint("/nonexistent/ckpt.pt"), Catch::Contains("/nonexistent/ckpt.pt"));
  std::remove(ckpt.c_str());
}
