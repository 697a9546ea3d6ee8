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

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "attn/data/inputs.h"
#include "attn/tasks/task.h"
#include "attn/train/distributed.h"

namespace attn::train {

struct TrainOptions {
  int epochs = 3;
  std::int64_t batch_size = 512;
  /// The last fraction of the rows is the validation set (Keras' validation_split: no shuffling).
  double val_split = 0.2;
  /// Adam's learning rate (betas 0.9/0.999, eps 1e-7 as in Keras); the schedule's peak.
  double lr = 1e-3;
  std::uint64_t seed = 0;
  /// Length-bucketed batches (each trimmed to its longest row); false pads every batch to maxlen.
  bool bucket = true;
  /// LibTorch's intra-op threads (the same threads, the same bits).
  int threads = 1;
  /// Stop after this many epochs without improvement of `monitor`; model.pt then holds the best
  /// epoch (0: train every epoch, model.pt holds the last).
  int early_stopping_patience = 0;
  /// What early stopping and reduce-on-plateau watch: loss, accuracy, or a validation metric with
  /// "val_" in front (val_loss, val_mean_auc, val_exact_match, ...). Losses improve downwards, the
  /// rest upwards.
  std::string monitor = "val_loss";
  /// constant; reduce-on-plateau (lr x lr_factor after lr_patience epochs without improvement of
  /// `monitor`, not below min_lr); warmup-linear (linear warm-up over warmup_steps, then linear decay
  /// to min_lr at the last step); cosine (warm-up, then cosine decay to min_lr).
  std::string lr_schedule = "constant";
  double lr_factor = 0.1;
  int lr_patience = 2;
  double min_lr = 0;
  std::int64_t warmup_steps = 0;
  /// Clip the gradients' global L2 norm to this before each step (0: no clipping).
  double clip_norm = 0;
  /// The binary cross-entropy's positive weight per label: "" (none), "auto" (negatives / positives
  /// per label over the training rows) or "w1,w2,..." (classifiers).
  std::string pos_weight;
  /// Word vectors (word2vec / GloVe / fastText text format, optionally gzipped) the word embedding
  /// starts from; `freeze_embeddings` keeps it fixed.
  std::string embeddings;
  bool freeze_embeddings = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TrainOptions, epochs, batch_size, val_split, lr, seed, bucket, threads,
                                                early_stopping_patience, monitor, lr_schedule, lr_factor, lr_patience, min_lr,
                                                warmup_steps, clip_norm, pos_weight, embeddings, freeze_embeddings)

/// Throws std::invalid_argument naming the flag of a value out of range.
void validate(const TrainOptions& options);

/// The training flags (`attn train --epochs ... --lr-schedule ...`), declared once: the train app
/// registers them, training_overrides() reads them into TrainOptions' JSON keys.
std::vector<data::InputSpec> training_inputs();
/// The given training flags as {key: value} over TrainOptions' keys (e.g. {"batch_size": 64}).
nlohmann::json training_overrides(const data::Inputs& inputs);

/// Where an epoch is, for a progress bar.
struct Progress {
  int epoch = 0, epochs = 0;
  std::int64_t rows_done = 0, rows_total = 0;
  double seconds = 0, loss = 0, accuracy = 0;
};

struct EpochRecord {
  int epoch = 0;
  double loss = 0, accuracy = 0;  ///< training, averaged over the epoch's rows
  double lr = 0;                  ///< the learning rate at the epoch's last step
  double seconds = 0, rows_per_second = 0;
  std::int64_t train_rows = 0, train_tokens = 0;  ///< tokens in the (trimmed) batches, padding included
  nlohmann::ordered_json validation;              ///< the task's metrics of the validation rows
  bool best = false;                              ///< the best epoch so far by `monitor`
  bool stop = false;                              ///< early stopping ends training after this epoch
};
/// One metrics.jsonl record: epoch, loss, accuracy, the validation metrics prefixed "val_", then
/// lr, best, train_rows, train_tokens, seconds, rows_per_second.
nlohmann::ordered_json to_json(const EpochRecord& r);

class Trainer {
 public:
  /// `data` (and `validation`, when given: rows held out in a data set of their own, instead of
  /// the last val_split of `data`) must outlive the trainer. Parameters without requires_grad
  /// (frozen) stay as they are. With `workers` (distributed.h, outliving the trainer), this is one
  /// of several data-parallel workers: rank 0's weights are broadcast, each global batch is shared
  /// out and the gradients summed, so every worker holds the same weights after every step.
  Trainer(torch::jit::Module model, const tasks::Dataset& data, const tasks::Dataset* validation, const TrainOptions& options,
          Workers* workers = nullptr);
  ~Trainer();

  /// Trains the remaining epochs. `stop` is checked after every batch: when it turns true, run()
  /// returns false at once (save_checkpoint() then records the position inside the epoch).
  bool run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
           const std::function<void(const EpochRecord&)>& on_epoch);

  /// Validation metrics of the current model (the task's evaluate() of the validation rows).
  nlohmann::ordered_json validate();
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
