#pragma once
/// Training a registered model on a task's data (tasks/task.h): Adam on the task's loss, the last
/// val_split of the rows held out as Keras' validation_split does, length-bucketed batches,
/// per-epoch validation through the task's evaluate(), checkpoints that resume exactly.
/// Deterministic for a given seed and thread count.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "attn/tasks/task.h"

namespace attn::train {

struct TrainOptions {
  int epochs = 3;
  std::int64_t batch_size = 512;
  /// The last fraction of the rows is the validation set (Keras' validation_split: no shuffling).
  double val_split = 0.2;
  /// Adam's learning rate (betas 0.9/0.999, eps 1e-7 as in Keras).
  double lr = 1e-3;
  std::uint64_t seed = 0;
  /// Length-bucketed batches (each trimmed to its longest row); false pads every batch to maxlen.
  bool bucket = true;
  /// LibTorch's intra-op threads (the same threads, the same bits).
  int threads = 1;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TrainOptions, epochs, batch_size, val_split, lr, seed, bucket, threads)

/// Throws std::invalid_argument naming the flag of a value out of range.
void validate(const TrainOptions& options);

/// Where an epoch is, for a progress bar.
struct Progress {
  int epoch = 0, epochs = 0;
  std::int64_t rows_done = 0, rows_total = 0;
  double seconds = 0, loss = 0, accuracy = 0;
};

struct EpochRecord {
  int epoch = 0;
  double loss = 0, accuracy = 0;  ///< training, averaged over the epoch's rows
  double seconds = 0, rows_per_second = 0;
  std::int64_t train_rows = 0, train_tokens = 0;  ///< tokens in the (trimmed) batches, padding included
  nlohmann::ordered_json validation;              ///< the task's metrics of the validation rows
};
/// One metrics.jsonl record: epoch, loss, accuracy, the validation metrics prefixed "val_", then
/// train_rows, train_tokens, seconds, rows_per_second.
nlohmann::ordered_json to_json(const EpochRecord& r);

class Trainer {
 public:
  /// `data` must outlive the trainer.
  Trainer(torch::jit::Module model, const tasks::Dataset& data, const TrainOptions& options);
  ~Trainer();

  /// Trains the remaining epochs. `stop` is checked after every batch: when it turns true, run()
  /// returns false at once (save_checkpoint() then records the position inside the epoch).
  bool run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
           const std::function<void(const EpochRecord&)>& on_epoch);

  /// Validation metrics of the current model (the task's evaluate() of the validation rows).
  nlohmann::ordered_json validate();
  int epochs_done() const;
  torch::jit::Module& model();

  /// Weights, optimizer state and position (epoch, batch, running sums), written atomically.
  void save_checkpoint(const std::string& path) const;
  /// Restores a checkpoint of the same model and data; errors name the path.
  void load_checkpoint(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::train
