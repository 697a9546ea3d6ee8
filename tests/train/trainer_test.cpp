// The Trainer: deterministic for a seed, resuming exactly from a checkpoint, refusing another model's.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <torch/script.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <catch2/catch.hpp>

#include "attn/data/prepare.h"
#include "attn/data/toxic_corpus.h"
#include "attn/io/atomic_file.h"
#include "attn/io/checksum.h"
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "attn/train/trainer.h"
#include "tasks/text_dataset.h"  // (the tasks layer's own: text_dataset)

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

/// A dataset whose validation also reports "flat", a number that never improves after the first
/// epoch: what the callbacks watching a monitored metric are tested with.
class WithFlatMetric : public tasks::Dataset {
 public:
  explicit WithFlatMetric(std::unique_ptr<tasks::Dataset> data) : d_(std::move(data)) {}
  std::int64_t rows() const override { return d_->rows(); }
  const std::vector<std::int64_t>& lengths() const override { return d_->lengths(); }
  tasks::Batch batch(const std::vector<std::int64_t>& rows, tasks::Width width) const override { return d_->batch(rows, width); }
  tasks::Loss loss(torch::jit::Module& model, const tasks::Batch& b, const torch::Tensor& w) const override {
    return d_->loss(model, b, w);
  }
  std::vector<std::string> metric_names() const override {
    auto names = d_->metric_names();
    names.push_back("flat");
    return names;
  }
  tasks::Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows,
                             const tasks::EvaluateOptions& options) const override {
    tasks::Evaluation e = d_->evaluate(model, rows, options);
    e.metrics["flat"] = 1.0;  // never lower: "flat" is maximised, so no epoch after the first improves it
    return e;
  }
  nlohmann::json data_config() const override { return d_->data_config(); }
  models::DataSizes sizes() const override { return d_->sizes(); }
  std::map<std::string, std::string> files() const override { return d_->files(); }

 private:
  std::unique_ptr<tasks::Dataset> d_;
};

torch::jit::Module tiny_model() {
  torch::manual_seed(5);
  const auto& entry = models::find_model("bilstm-attention");
  return entry.build(models::resolve_config(entry, {{"num_words", 20000}, {"embed_dim", 8}, {"lstm_units", 4}}), nn::Runtime::kNative);
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
    CHECK_FALSE(t.run(
        stop,
        [&](const train::Progress&) {
          if (++batches == 4) stop = true;
        },
        nullptr));
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
  for (std::size_t i = 0; i < resumed.size(); ++i)
    UNSCOPED_INFO(i << ": " << std::setprecision(17) << resumed[i] << " vs " << losses[0][i]);
  CHECK(resumed == losses[0]);
}

TEST_CASE("Trainer: a checkpoint of another model is refused with the path", "[train][trainer]") {
  const auto task = tiny_data();
  const tasks::Dataset& data = *task;
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt2_" + std::to_string(::getpid()) + ".pt")).string();
  train::Trainer(tiny_model(), data, nullptr, tiny_options()).save_checkpoint(ckpt);
  const auto& entry = models::find_model("bilstm-attention");
  train::Trainer other(entry.build(models::resolve_config(entry, {{"embed_dim", 8}, {"lstm_units", 5}}), nn::Runtime::kNative), data,
                       nullptr, tiny_options());
  CHECK_THROWS_WITH(other.load_checkpoint(ckpt), Catch::Contains(ckpt) && Catch::Contains("shape"));
  CHECK_THROWS_WITH(other.load_checkpoint("/nonexistent/ckpt.pt"), Catch::Contains("/nonexistent/ckpt.pt"));
  std::remove(ckpt.c_str());
}

namespace {

struct Epochs {
  std::vector<double> losses, lrs;
  std::vector<bool> best;
  int batches = 0;  ///< steps taken
};

Epochs train_epochs(const tasks::Dataset& data, const train::TrainOptions& o, int stop_after_batches = 0, const std::string& ckpt = "") {
  Epochs out;
  std::atomic<bool> stop{false};
  int batches = 0;
  train::Trainer t(tiny_model(), data, nullptr, o);
  if (!ckpt.empty() && stop_after_batches == 0) t.load_checkpoint(ckpt);
  const bool done = t.run(
      stop,
      [&](const train::Progress&) {
        ++out.batches;
        if (stop_after_batches && ++batches == stop_after_batches) stop = true;
      },
      [&](const train::EpochRecord& e) {
        out.losses.push_back(e.validation.at("loss").get<double>());
        out.lrs.push_back(e.lr);
        out.best.push_back(e.best);
      });
  if (!done) t.save_checkpoint(ckpt);
  return out;
}

}  // namespace

TEST_CASE("schedules: warm-up then cosine decay to min_lr, and an interrupted run resumes exactly", "[train][trainer][schedule]") {
  const auto task = tiny_data();
  train::TrainOptions o = tiny_options();
  o.epochs = 3;
  o.lr = 0.01;
  o.lr_schedule = train::LrSchedule::kCosine;
  o.warmup_steps = 4;
  o.min_lr = 1e-4;
  const Epochs full = train_epochs(*task, o);
  REQUIRE(full.lrs.size() == 3);
  CHECK(full.lrs[0] > full.lrs[1]);
  CHECK(full.lrs[1] > full.lrs[2]);
  CHECK(full.lrs[2] == Approx(1e-4).epsilon(0.05));  // the last step is at the end of the decay
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt_s_" + std::to_string(::getpid()) + ".pt")).string();
  train_epochs(*task, o, 6, ckpt);  // stopped inside epoch 1, during the warm-up's end
  const Epochs resumed = train_epochs(*task, o, 0, ckpt);
  std::remove(ckpt.c_str());
  CHECK(resumed.losses == full.losses);
  CHECK(resumed.lrs == full.lrs);
  o.lr_schedule = train::LrSchedule::kWarmupLinear;
  o.min_lr = 0;
  const Epochs linear = train_epochs(*task, o);
  CHECK(linear.lrs[2] < 0.01 * 0.2);  // decays linearly to 0 at the last step
}

TEST_CASE("reduce-on-plateau and early stopping watch the monitored metric", "[train][trainer][schedule]") {
  const auto task = std::make_unique<WithFlatMetric>(tiny_data());
  train::TrainOptions o = tiny_options();
  o.epochs = 10;
  o.lr = 0.01;
  o.monitor = "val_flat";  // a metric that never improves after the first epoch
  o.lr_schedule = train::LrSchedule::kReduceOnPlateau;
  o.lr_patience = 1;
  o.lr_factor = 0.1;
  o.early_stopping_patience = 2;
  const Epochs e = train_epochs(*task, o);
  REQUIRE(e.lrs.size() == 3);  // epoch 1 the best, 2 and 3 without improvement: stopped
  CHECK(e.best == std::vector<bool>{true, false, false});
  CHECK(e.lrs[0] == Approx(0.01));
  CHECK(e.lrs[1] == Approx(0.01));
  CHECK(e.lrs[2] == Approx(0.001));  // lowered after epoch 2
  // Interrupted in its last epoch (after the plateau lowered the rate) and resumed: the same epochs,
  // rates and best marks, and the same stop (the callbacks' counters are in the checkpoint).
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt_p_" + std::to_string(::getpid()) + ".pt")).string();
  train_epochs(*task, o, e.batches - 1, ckpt);
  const Epochs resumed = train_epochs(*task, o, 0, ckpt);
  std::remove(ckpt.c_str());
  CHECK(resumed.losses == std::vector<double>(e.losses.end() - 1, e.losses.end()));
  CHECK(resumed.lrs == std::vector<double>(e.lrs.end() - 1, e.lrs.end()));
  CHECK(resumed.best == std::vector<bool>{false});
  o.monitor = "val_nonsense";
  CHECK_THROWS_WITH(train_epochs(*task, o), Catch::Contains("--monitor val_nonsense"));
  o.monitor = "val_loss";
  o.val_split = 0;
  CHECK_THROWS_WITH(train::Trainer(tiny_model(), *task, nullptr, o), Catch::Contains("needs validation rows"));
}

TEST_CASE("clip_norm: gradients clipped to a tiny norm barely move the weights", "[train][trainer]") {
  const auto task = tiny_data();
  const auto moved = [&](double clip) {
    train::TrainOptions o = tiny_options();
    o.epochs = 1;
    o.clip_norm = clip;
    train::Trainer t(tiny_model(), *task, nullptr, o);
    const torch::Tensor before = t.model().attr("dense").toModule().attr("weight").toTensor().clone();
    std::atomic<bool> stop{false};
    t.run(stop, nullptr, nullptr);
    return (t.model().attr("dense").toModule().attr("weight").toTensor() - before).abs().sum().item<double>();
  };
  CHECK(moved(1e-9) < 0.05 * moved(0));
}

namespace {
std::string g_warning;
void keep_warning(const std::string& message) { g_warning = message; }
}  // namespace

TEST_CASE("checkpoints from before checksums load, with a warning that they carry none", "[train][trainer][checksum]") {
  const auto task = tiny_data();
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt_old_" + std::to_string(::getpid()) + ".pt")).string();
  train::Trainer t(tiny_model(), *task, nullptr, tiny_options());
  t.save_checkpoint(ckpt);
  torch::serialize::InputArchive in;  // the same archive without its "checksums" entry
  in.load_from(ckpt);
  torch::serialize::OutputArchive out;
  for (const std::string& key : in.keys()) {
    if (key == "checksums") continue;
    c10::IValue v;
    REQUIRE(in.try_read(key, v));
    out.write(key, v);
  }
  out.save_to(ckpt);
  io::set_warning_handler(keep_warning);
  train::Trainer other(tiny_model(), *task, nullptr, tiny_options());
  CHECK_NOTHROW(other.load_checkpoint(ckpt));
  io::set_warning_handler(nullptr);
  CHECK_THAT(g_warning, Catch::Contains(ckpt) && Catch::Contains("carries no checksums"));
  std::remove(ckpt.c_str());
}

TEST_CASE("checkpoints: a flipped bit in a parameter is refused, naming it", "[train][trainer][checksum]") {
  const auto task = tiny_data();
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("attn_ckpt_c_" + std::to_string(::getpid()) + ".pt")).string();
  train::Trainer t(tiny_model(), *task, nullptr, tiny_options());
  t.save_checkpoint(ckpt);
  const torch::Tensor bias = t.model().attr("dense").toModule().attr("bias").toTensor().contiguous();
  const std::string needle(static_cast<const char*>(bias.data_ptr()), static_cast<std::size_t>(bias.numel()) * sizeof(float));
  std::string bytes = io::read_file(ckpt);
  const std::size_t at = bytes.find(needle);
  REQUIRE(at != std::string::npos);
  bytes[at + 3] = static_cast<char>(bytes[at + 3] ^ 0x01);
  std::ofstream(ckpt, std::ios::binary) << bytes;
  train::Trainer other(tiny_model(), *task, nullptr, tiny_options());
  CHECK_THROWS_WITH(other.load_checkpoint(ckpt), Catch::Contains(ckpt) && Catch::Contains("'dense.bias' does not match its checksum"));
  std::remove(ckpt.c_str());
}
