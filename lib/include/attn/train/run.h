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
#include "attn/train/trainer.h"

namespace attn::train {

/// config.json: what was trained, on what, how. Embedded in model.pt.
struct RunConfig {
  std::string format = "attn.run/1";
  std::string model;            ///< registry name
  std::string task;             ///< the task's name
  int model_revision = 0;       ///< the registry entry's revision the weights belong to (ModelEntry::revision)
  nlohmann::json model_config;  ///< complete: defaults, overrides, and the sizes the data fixes
  TrainOptions training;
  nlohmann::json data;        ///< the task's data config
  nlohmann::json validation;  ///< the validation rows' data config (--val-csv), or null
  nlohmann::json embeddings;  ///< what --embeddings covered (file, words and tokens found), or null
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunConfig, format, model, task, model_revision, model_config, training, data, validation,
                                                embeddings)

struct TrainRequest {
  std::string model = "bilstm-attention";                     ///< registry name
  nlohmann::json model_overrides = nlohmann::json::object();  ///< on top of the registry defaults (--config, then --set)
  /// Training settings given on the command line, by TrainOptions' keys (training_overrides()); the
  /// rest come from the model's registry entry.
  nlohmann::json training = nlohmann::json::object();
  std::string out_dir;
  data::Inputs data;  ///< the task's train inputs (--csv, --val-csv, --text-column, ...)
  /// Data-parallel workers (distributed.h), or none. Only rank 0 writes the run directory; the
  /// others read the same data. A group torchrun restarted continues the run from its checkpoint.
  Workers* workers = nullptr;
};

/// What `--dump-config` prints: the model, its config (before the data fixes its sizes), the keys
/// the data will set ("model_config_set_from_data") and the effective training settings. Bad
/// names, keys and values throw std::invalid_argument.
nlohmann::ordered_json planned_config(const TrainRequest& request);

class TrainingRun {
 public:
  /// Reads (and for a text CSV prepares) the data, builds the model from the registry, writes
  /// config.json and the task's files. std::invalid_argument for bad settings, std::runtime_error
  /// for files.
  static TrainingRun start(const TrainRequest& request);
  /// Reopens RUN_DIR at its last checkpoint with the run's settings; `training` overrides may change
  /// the total epoch count only. The number of `workers` may differ from the run's until now.
  static TrainingRun resume(const std::string& run_dir, const nlohmann::json& training, Workers* workers = nullptr);
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

/// What `attn train` asks for: a new run, or a run to continue.
struct TrainCommand {
  TrainRequest request;                      ///< a new run (request.workers is filled in by run_training)
  std::string resume;                        ///< or the run directory to continue from its checkpoint
  std::vector<std::string> given;            ///< the flags given, without "--" (--resume takes only --epochs)
  std::chrono::seconds worker_timeout{300};  ///< how long a worker waits for the others
};

/// Where `attn train` reports: lines for standard output (a worker after the first prints what it
/// trains and when it is done, each line starting with "[rank N] "; the epochs' figures, the same
/// on every worker, only rank 0), and the progress bar (rank 0 only; null for none).
struct TrainOutput {
  std::function<void(const std::string&)> print;
  std::function<void(const Progress&)> progress;
  /// Sets the process's compute threads to the run's (--threads, or a resumed run's own) before it
  /// trains: the app's to do (the library never changes process-wide settings); null leaves them.
  std::function<void(int threads)> threads;
};

enum class TrainOutcome { kFinished, kInterrupted };

/// `attn models`: every registered model with its task, training defaults (as `attn train` flags)
/// and config keys.
std::string describe_models();

/// `attn train`: joins torchrun's workers when its environment names some (distributed.h), starts or
/// resumes the run, prints what it trains and every epoch, and trains until the end or until `stop`
/// turns true (checkpoint written: kInterrupted). Settings --resume cannot change are a
/// std::invalid_argument naming them.
TrainOutcome run_training(const TrainCommand& command, const std::atomic<bool>& stop, const TrainOutput& output);

}  // namespace attn::train
