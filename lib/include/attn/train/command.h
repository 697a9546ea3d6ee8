#pragma once
/// `attn train` as a library call: what the app fills in and calls. This header does not include
/// LibTorch (the run and the trainer are run.h and trainer.h).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/train/options.h"

namespace attn::parallel {
class Workers;  // parallel/workers.h
}
namespace attn::models {
struct ModelEntry;  // models/registry.h
}
namespace attn::tasks {
class Task;  // tasks/task.h
}

namespace attn::train {

/// Where an epoch is, for a progress bar.
struct Progress {
  int epoch = 0, epochs = 0;
  std::int64_t rows_done = 0, rows_total = 0;
  double seconds = 0, loss = 0, accuracy = 0;
};

struct TrainRequest {
  std::string model;  ///< registry name; "": the one the inputs call for (tasks::model_for_training)
  nlohmann::json model_overrides = nlohmann::json::object();  ///< on top of the registry defaults (--config, then --set)
  /// Training settings given on the command line, by TrainOptions' keys (training_overrides()); the
  /// rest come from the model's registry entry.
  nlohmann::json training = nlohmann::json::object();
  std::string out_dir;
  data::Inputs data;  ///< the task's train inputs (--csv, --val-csv, --text-column, ...)
  /// Data-parallel workers (parallel/workers.h), or none. Only rank 0 writes the run directory; the
  /// others read the same data. A group torchrun restarted continues the run from its checkpoint.
  parallel::Workers* workers = nullptr;
};

/// What a new run trains, resolved once from its request and checked before any data is read:
/// what `--dump-config` prints and what TrainingRun::start runs.
struct TrainingPlan {
  const models::ModelEntry* entry = nullptr;  ///< the registry's model
  const tasks::Task* task = nullptr;          ///< its task
  nlohmann::json model_config;                ///< the model's config before the data fixes its sizes
  /// The training settings: the model's recipe (models::ModelEntry::training), then its task's for
  /// the data (tasks::Task::training_recipe), then the flags given.
  TrainOptions training;
};
/// `request`'s plan. Bad names, keys and values (and settings that cannot go together) throw
/// std::invalid_argument.
TrainingPlan plan_training(const TrainRequest& request);

/// What `--dump-config` prints: the model, its config (before the data fixes its sizes), the keys
/// the data will set ("model_config_set_from_data") and the effective training settings.
nlohmann::ordered_json planned_config(const TrainRequest& request);

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

/// `attn train`: joins torchrun's workers when its environment names some (parallel/workers.h), starts or
/// resumes the run, prints what it trains and every epoch, and trains until the end or until `stop`
/// turns true (checkpoint written: kInterrupted). Settings --resume cannot change are a
/// std::invalid_argument naming them.
TrainOutcome run_training(const TrainCommand& command, const std::atomic<bool>& stop, const TrainOutput& output);

}  // namespace attn::train
