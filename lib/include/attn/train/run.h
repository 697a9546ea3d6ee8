#pragma once
/// A training run directory, start to finish: config.json (RunConfig), the task's files
/// (tokenizer.json; target_tokenizer.json for seq2seq), the data (data/: prepared data when a text
/// model is trained from a CSV, a copy of the CSV for the other models), metrics.jsonl (a record per
/// epoch), checkpoint.pt (after every epoch and on interruption, atomically) and model.pt (the model
/// with config.json and the task's files embedded).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/train/command.h"
#include "attn/train/trainer.h"

namespace attn::train {

class TrainingRun {
 public:
  /// Reads (and for a text CSV prepares) the data, builds the model from the registry, writes
  /// config.json and the task's files. std::invalid_argument for bad settings, std::runtime_error
  /// for files.
  static TrainingRun start(const TrainRequest& request);
  /// Reopens RUN_DIR at its last checkpoint with the run's settings; `training` overrides may change
  /// the total epoch count only. The number of `workers` may differ from the run's until now.
  static TrainingRun resume(const std::string& run_dir, const nlohmann::json& training, parallel::Workers* workers = nullptr);
  TrainingRun(TrainingRun&&) noexcept;
  ~TrainingRun();

  const RunConfig& config() const;
  int epochs_done() const;
  /// "training MODEL on N rows, E epochs, batch B, ... -> DIR", and what --embeddings covered.
  std::string describe() const;

  /// Trains to the end, writing metrics.jsonl, checkpoint.pt and model.pt after every epoch.
  /// When `stop` turns true, writes the checkpoint and returns false (resume continues exactly).
  bool train(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
             const std::function<void(const EpochRecord&)>& on_epoch);

 private:
  struct Impl;
  explicit TrainingRun(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::train
