// The Trainer: deterministic for a seed, resuming exactly from a checkpoint, refusing another model's.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <iomanip>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "attn/data/prepare.h"
#include "attn/data/toxic_corpus.h"
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "attn/train/trainer.h"

using namespace attn;

namespace {

/// A small prepared corpus from the toxic generator, as a training task.
std::unique_ptr<tasks::Dataset> tiny_data() {
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
  tasks::TextDataConfig config;
  config.labels = prepared.data.label_names;
  return tasks::text_dataset(std::move(prepared.data), std::move(prepared.tokenizer), config);
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

TEST_CASE("Trainer: same seed, same metrics, an interrupted run resumes exactly", "[train][trainer]") {
  const auto task = tiny_data();
  const tasks::Dataset& data = *task;
  std::atomic<bool> never{false};
  std::vector<double> losses[2];
  for (int run = 0; run < 2; ++run) {
    train::Trainer t(tiny_model(), data, nullptr, tiny_options());
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
    train::Trainer t(tiny_model(), data, nullptr, tiny_options());
    CHECK_FALSE(t.run(stop, [&](const train::Progress&) { if (++batches == 4) stop = true; }, nullptr));
    t.save_checkpoint(ckpt);
  }
  std::vector<double> resumed;
  train::Trainer t(tiny_model(), data, nullptr, tiny_options());
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
  const tasks::Dataset& data = *task;
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt2_" + std::to_string(::getpid()) + ".pt")).string();
  train::Trainer(tiny_model(), data, nullptr, tiny_options()).save_checkpoint(ckpt);
  const auto& entry = models::find_model("bilstm-attention");
  train::Trainer other(entry.build(models::resolve_config(entry, {{"embed_dim", 8}, {"lstm_units", 5}})), data, nullptr, tiny_options());
  CHECK_THROWS_WITH(other.load_checkpoint(ckpt), Catch::Contains(ckpt) && Catch::Contains("shape"));
  CHECK_THROWS_WITH(other.load_checkpoint("/nonexistent/ckpt.pt"), Catch::Contains("/nonexistent/ckpt.pt"));
  std::remove(ckpt.c_str());
}
