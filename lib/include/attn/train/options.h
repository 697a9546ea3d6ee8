#pragma once
/// The training settings. One typed table (train_options()) binds each setting's flag (`attn train
/// --batch-size`), its help (the default printed from the value), its key in config.json's
/// "training" block and its field of TrainOptions; the flags, the JSON (config.json, --dump-config,
/// --resume) and validation all read it. A new setting is a field, a row, and the code that uses it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"

namespace attn::train {

/// The learning rate over training (see TrainOptions::lr_schedule).
enum class LrSchedule { kConstant, kReduceOnPlateau, kWarmupLinear, kCosine };
/// "constant", "reduce-on-plateau", "warmup-linear", "cosine".
const char* lr_schedule_name(LrSchedule schedule);
/// The name as a schedule; another name throws std::invalid_argument naming `what` and the names.
LrSchedule parse_lr_schedule(const std::string& name, const std::string& what);
void to_json(nlohmann::json& j, LrSchedule schedule);
void from_json(const nlohmann::json& j, LrSchedule& schedule);

/// Whether a monitored metric improves downwards (losses) or upwards (the rest).
enum class MonitorMode { kMinimize, kMaximize };
MonitorMode monitor_mode(const std::string& monitor);

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
  /// Data-parallel workers sum only the rows of an embedding table's gradient that the step's batch
  /// touched (the same bits as the whole table; distributed.h); false sends every row (for comparison).
  bool sparse_gradients = true;
  /// LibTorch's intra-op threads (the same threads, the same bits); the app's --threads.
  int threads = 1;
  /// Stop after this many epochs without improvement of `monitor`; model.pt then holds the best
  /// epoch (0: train every epoch, model.pt holds the last).
  int early_stopping_patience = 0;
  /// What early stopping and reduce-on-plateau watch: loss, accuracy, or a validation metric with
  /// "val_" in front (val_loss, val_mean_auc, val_exact_match, ...); see monitor_mode().
  std::string monitor = "val_loss";
  /// kReduceOnPlateau: lr x lr_factor after lr_patience epochs without improvement of `monitor`,
  /// not below min_lr; kWarmupLinear: linear warm-up over warmup_steps, then linear decay to min_lr
  /// at the last step; kCosine: warm-up, then cosine decay to min_lr.
  LrSchedule lr_schedule = LrSchedule::kConstant;
  double lr_factor = 0.1;
  int lr_patience = 2;
  double min_lr = 0;
  std::int64_t warmup_steps = 0;
  /// Clip the gradients' global L2 norm to this before each step (0: no clipping).
  double clip_norm = 0;
  /// The binary cross-entropy's positive weight per label: "" (none), "auto" (negatives / positives
  /// per label over the training rows) or "w1,w2,..." (classifiers).
  std::string pos_weight;
  /// One class per row: the cross-entropy's weight per class: "" (none), "balanced" (rows / (classes x
  /// the class's rows) over the training rows) or "w1,w2,...".
  std::string class_weight;
  /// Span taggers: each text adds span_f1_loss x (1 - the soft F1 of its marked tokens) to the
  /// tokens' loss (tasks/span_tagging.h); 0: the tokens' loss alone (the default of other tasks; a
  /// span tagger's is 1).
  double span_f1_loss = 0;
  /// Word vectors (word2vec / GloVe / fastText text format, optionally gzipped) the word embedding
  /// starts from; `freeze_embeddings` keeps it fixed.
  std::string embeddings;
  bool freeze_embeddings = false;
  /// Text models: before training, the word embedding (and the n-gram rows of a model with subwords)
  /// learns from the training file's own texts by skip-gram (data/skipgram.h, `attn embed`'s, on one
  /// thread: the same vectors on every run), this many passes at most (0: not at all): a file of
  /// more than kPretrainWords / pretrain_epochs words gets fewer passes, at least one.
  int pretrain_epochs = 0;
  /// One class per row: "macro-f1" adds per-class offsets to the output layer's bias once training
  /// is done, chosen on the held-out rows to maximise their macro-F1 (tasks::Dataset::logit_offsets);
  /// a span tagger: "span-f1" moves its one output's bias, its threshold, to maximise their
  /// character F1; "none" leaves model.pt as trained.
  std::string logit_adjustment = "none";
  /// Text classifiers: train this many copies of the model side by side, each from its own initial
  /// weights and by its own loss, saved as one model averaging their probabilities (models/ensemble.h).
  int ensemble = 1;
};

/// The words (with repeats) pretraining reads at most over its passes: about a minute on one core.
inline constexpr std::int64_t kPretrainWords = 8'000'000;
/// The passes pretraining makes over a file of `words` words: pretrain_epochs, fewer when they would
/// read more than kPretrainWords, at least 1 (0 when pretrain_epochs is).
int pretrain_passes(const TrainOptions& options, std::int64_t words);

/// One training setting: a row of the table.
struct TrainOption {
  enum class Kind { kValue, kFlag, kNegatedFlag };
  std::string flag;  ///< without "--", e.g. "batch-size"; "" for threads (every app's --threads)
  std::string key;   ///< config.json's, e.g. "batch_size"
  std::string help;  ///< ending with the default, printed from TrainOptions{} (or "the model's")
  Kind kind = Kind::kValue;
  std::function<nlohmann::json(const TrainOptions&)> get;         ///< the field as JSON
  std::function<void(TrainOptions&, const nlohmann::json&)> set;  ///< the field from JSON of its kind
  std::function<nlohmann::json(const std::string& text)>
      parse;                                              ///< a flag's text as the field's JSON; bad: std::invalid_argument naming the flag
  std::function<std::string(const TrainOptions&)> check;  ///< "" or what is wrong ("must be >= 1, got 0")
};

/// Every training setting, in --help's order: the one table.
const std::vector<TrainOption>& train_options();

/// config.json's "training" block, by the table.
void to_json(nlohmann::json& j, const TrainOptions& o);
/// The keys of the table that `j` holds (the others keep their defaults); values of another kind
/// throw (read through io::get_like to name the key).
void from_json(const nlohmann::json& j, TrainOptions& o);

/// Throws std::invalid_argument naming the flag of a value out of range.
void validate(const TrainOptions& options);

/// The training flags, from the table (the train app registers them; --threads is its own).
std::vector<data::InputSpec> training_inputs();
/// The given training flags as {key: typed value} (e.g. {"batch_size": 64}); a value a flag cannot
/// take throws std::invalid_argument naming the flag.
nlohmann::json training_overrides(const data::Inputs& inputs);

/// A model's training defaults (its registry entry's "training") as `attn train` flags, in the
/// table's order: " --batch-size 512 --epochs 3" (`attn models`).
std::string training_flags(const nlohmann::json& training);
/// TrainOptions{}, then `defaults` (a model's recipe, ModelEntry::training), then `overrides`, each
/// by the table's keys; unknown keys, values of another kind and values out of range throw
/// std::invalid_argument naming them.
TrainOptions effective_options(const nlohmann::json& defaults, const nlohmann::json& overrides);

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
  /// --logit-adjustment: the offsets added to each class's output bias ({class: offset}), the
  /// held-out rows' macro-F1 before and after; null when not adjusted.
  nlohmann::json logit_adjustment;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunConfig, format, model, task, model_revision, model_config, training, data, validation,
                                                embeddings, logit_adjustment)

}  // namespace attn::train
