#pragma once
/// A training run directory, start to finish: config.json (registry name, task, full model config,
/// training and data settings), the task's files (tokenizer.json; target_tokenizer.json for
/// seq2seq), the data (data/: prepared when a text model is trained from a CSV, a copy of the CSV
/// for the other models), metrics.jsonl (a
/// record per epoch), checkpoint.pt (after every epoch and on interruption, atomically) and
/// model.pt (the model with config.json and the task's files embedded).
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/train/task.h"
#include "attn/train/trainer.h"

namespace attn::train {

struct RunOptions {
  std::string out_dir;
  std::string model;               ///< registry name
  nlohmann::json model_overrides;  ///< on top of the registry defaults (config file, then --set)
  TrainOptions train;
  int threads = 1;
  DataSource data;
};

class TrainingRun {
 public:
  /// Loads (and for a text CSV prepares) the data, builds the model from the registry, writes
  /// config.json and the task's files. Errors: std::invalid_argument for bad settings, std::runtime_error for files.
  static TrainingRun start(const RunOptions& options);
  /// Reopens RUN_DIR at its last checkpoint; `epochs` (if set) changes the total epoch count.
  static TrainingRun resume(const std::string& run_dir, std::optional<int> epochs);
  TrainingRun(TrainingRun&&) noexcept;
  ~TrainingRun();

  /// The effective configuration (what config.json holds).
  const nlohmann::json& config() const;
  int epochs_done() const;

  /// Trains to the end, writing metrics.jsonl, checkpoint.pt and model.pt after every epoch.
  /// When `stop` turns true, writes the checkpoint and returns false (resume continues exactly).
  bool train(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
             const std::function<void(const EpochRecord&)>& on_epoch);

 private:
  struct Impl;
  explicit TrainingRun(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The registry's model built from a full config.json (model name + model_config).
torch::jit::Module build_model(const nlohmann::json& config);

}  // namespace attn::train
