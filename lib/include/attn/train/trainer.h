#pragma once
/// Training a registered model on a task's data (tasks/task.h): Adam on the task's loss, the last
/// val_split of the rows held out as Keras' validation_split does (or a validation data set of its
/// own), length-bucketed batches, per-epoch validation through the task's evaluate(), the Keras
/// callbacks users expect (early stopping, learning-rate schedules, gradient clipping, class
/// weights), and checkpoints that resume exactly. Deterministic for a given seed and thread count.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/parallel/workers.h"
#include "attn/tasks/task.h"
#include "attn/train/command.h"  // Progress
#include "attn/train/options.h"

namespace attn::train {

struct EpochRecord {
  int epoch = 0;
  double loss = 0, accuracy = 0;  ///< training, averaged over the epoch's rows
  double lr = 0;                  ///< the learning rate at the epoch's last step
  double seconds = 0, rows_per_second = 0;
  std::int64_t train_rows = 0, train_tokens = 0;  ///< tokens in the (trimmed) batches, padding included
  nlohmann::ordered_json validation;              ///< the task's metrics of the validation rows
  bool best = false;                              ///< the best epoch so far by `monitor`
  bool stop = false;                              ///< early stopping ends training after this epoch
  /// Data-parallel workers: the bytes each put into the collectives per step, the epoch's mean
  /// (-1: one process; not written).
  double allreduce_bytes = -1;
};
/// One metrics.jsonl record: epoch, loss, accuracy, the validation metrics prefixed "val_", then
/// lr, best, train_rows, train_tokens, seconds, rows_per_second (and allreduce_bytes with workers).
nlohmann::ordered_json to_json(const EpochRecord& r);

class Trainer {
 public:
  /// `data` (and `validation`, when given: rows held out in a data set of their own, instead of
  /// the last val_split of `data`) must outlive the trainer. Parameters without requires_grad
  /// (frozen) stay as they are. With `workers` (parallel/workers.h, outliving the trainer), this is one
  /// of several data-parallel workers: rank 0's weights are broadcast, each global batch is shared
  /// out and the gradients summed, so every worker holds the same weights after every step.
  /// `word_embedding` names the model's word-vector table (models::ModelEntry::word_embedding, ""
  /// for none): workers then know the rows a batch touches from its word ids (Dataset::word_ids).
  Trainer(torch::jit::Module model, const tasks::Dataset& data, const tasks::Dataset* validation, const TrainOptions& options,
          parallel::Workers* workers = nullptr, const std::string& word_embedding = "");
  ~Trainer();

  /// Trains the remaining epochs. `stop` is checked after every batch: when it turns true, run()
  /// returns false at once (save_checkpoint() then records the position inside the epoch).
  bool run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
           const std::function<void(const EpochRecord&)>& on_epoch);

  /// Validation metrics of the current model (the task's evaluate() of the validation rows).
  nlohmann::ordered_json validate();
  /// One class per row: the offsets to `model`'s log-probabilities that maximise the macro-F1 of the
  /// held-out rows (tasks::Dataset::logit_offsets); empty for other data or without held-out rows.
  metrics::LogitAdjustment logit_offsets(torch::jit::Module& model);
  int epochs_done() const;
  /// The best epoch by `monitor` so far (0: none yet).
  int best_epoch() const;
  torch::jit::Module& model();

  /// Weights, optimizer state and position (epoch, batch, running sums, the callbacks' state),
  /// written atomically.
  void save_checkpoint(const std::string& path) const;
  /// Restores a checkpoint of the same model and data; errors name the path.
  void load_checkpoint(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::train
