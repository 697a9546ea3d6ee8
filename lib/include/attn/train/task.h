#pragma once
/// A task: what the Trainer and a training run need to know about one kind of model and its data
/// (see models::TaskKind). It owns the data, cuts rows into batches, computes a batch's loss from
/// the model's `logits` method, and scores rows for validation. One implementation per kind:
///   text classification     Keras-tokenised padded ids, multi-label BCE, ROC AUC per label
///   feature classification  numeric rows, one 0/1 label, BCE, accuracy, mean attention per feature
///   sequence to sequence    character ids both sides, cross-entropy with teacher forcing,
///                           exact match and character accuracy of greedy decoding
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "attn/data/prepare.h"
#include "attn/data/tables.h"
#include "attn/io/prepared_data.h"
#include "attn/models/registry.h"
#include "attn/text/tokenizer.h"

namespace attn::train {

/// One batch: the arguments of the model's `logits` method and the targets.
struct Batch {
  std::vector<c10::IValue> inputs;
  torch::Tensor targets;
  std::int64_t tokens = 0;  ///< input positions in the batch, padding included
};

class Task {
 public:
  virtual ~Task() = default;

  virtual std::int64_t rows() const = 0;
  /// Each row's length, what batches are bucketed by (all 1 for fixed-size rows).
  virtual const std::vector<std::int64_t>& lengths() const = 0;
  /// The batch of `rows`; `trim`: as wide as its longest row, else as wide as the data.
  virtual Batch batch(const std::vector<std::int64_t>& rows, bool trim) const = 0;
  /// Training loss of a batch (a scalar with gradients) and the batch's accuracy.
  virtual std::pair<torch::Tensor, double> loss(torch::jit::Module& model, const Batch& batch) const = 0;
  /// Metrics of `rows` (eval mode, no gradients): "loss" and "acc", then the task's own.
  virtual nlohmann::ordered_json evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows,
                                          std::int64_t batch_size) const = 0;

  /// config.json's "data" block: where the data came from and what the model needs to read more.
  virtual const nlohmann::json& data_config() const = 0;
  /// Model config keys the data fixes (vocabulary sizes, label or feature counts).
  virtual nlohmann::json model_sizes() const = 0;
  /// Files stored in the run directory and embedded in model.pt, e.g. {"tokenizer.json": ...}.
  virtual std::map<std::string, std::string> files() const = 0;
};

/// Where a new run's data comes from (the fields the task kind uses).
struct DataSource {
  std::string data_dir;                         ///< text: prepared data (attn prepare's output), or
  std::optional<data::PrepareOptions> prepare;  ///< text: a CSV to prepare into RUN/data
  std::string csv;                              ///< features, seq2seq: the CSV
  std::vector<std::string> feature_columns;     ///< features (empty: all but the label)
  std::string label_column = "label";           ///< features
  std::string source_column = "source", target_column = "target";  ///< seq2seq
  int threads = 1;
};

/// Loads a new run's data for a model of `kind`. RUN_DIR/data receives the prepared data of a text
/// CSV, or a copy of a feature or seq2seq CSV (what config.json names and --resume reads).
std::unique_ptr<Task> open_task(models::TaskKind kind, const DataSource& source, const std::string& run_dir);
/// A text-classification task over data already in memory; `data_config` is what config.json's
/// "data" block will hold.
std::unique_ptr<Task> text_task(io::PreparedData data, text::Tokenizer tokenizer, nlohmann::json data_config = {});
/// Reloads the data of an existing run from its config.json and files.
std::unique_ptr<Task> reopen_task(models::TaskKind kind, const nlohmann::json& config, const std::string& run_dir);

// ---- Used by the tasks and by attn evaluate ----

/// The ids of `rows` of `x` as an int64 batch [rows, width]: width = the longest of them (at least
/// 1) when `trim`, else x's width. Real tokens sit at the end for pre padding, at the start for post.
torch::Tensor batch_ids(const text::PaddedSequences& x, const std::vector<std::int64_t>& rows, bool trim,
                        text::Side padding);

/// Probabilities [rows.size(), labels] (row-major) of a text model's forward over `rows`, in
/// length-bucketed batches, eval mode, no gradients.
std::vector<float> predict(torch::jit::Module& model, const text::PaddedSequences& x, const std::vector<std::int64_t>& rows,
                           text::Side padding, std::int64_t batch_size = 512);

/// A feature model over rows of `values` [rows, D]: probabilities [rows] and attention [rows, D].
std::pair<std::vector<float>, std::vector<float>> predict_features(torch::jit::Module& model, const std::vector<float>& values,
                                                                   std::int64_t features, std::int64_t batch_size = 4096);

/// Character sequences for a seq2seq model: the source tokenizer's ids (char level), and the
/// target's ids followed by the end id (target tokenizer size + 1).
struct SequencePairs {
  text::PaddedSequences source;  ///< post-padded
  text::PaddedSequences target;  ///< post-padded, each ending with the end id; empty without targets
  std::int32_t end_id = 0, start_id = 0;
};
SequencePairs encode_pairs(const data::PairTable& pairs, const text::Tokenizer& source, const text::Tokenizer& target,
                           int threads = 1);

/// Greedy translations of `rows` of `source` (in length-bucketed batches): each row's output ids
/// (up to, not including, the end id) and its attention [output length, source length] row-major.
struct Translation {
  std::vector<std::int32_t> ids;
  std::vector<float> attention;
  std::int64_t source_length = 0;
};
std::vector<Translation> translate(torch::jit::Module& model, const text::PaddedSequences& source,
                                   const std::vector<std::int64_t>& rows, std::int32_t end_id,
                                   std::int64_t batch_size = 512);
/// The string of output ids (the target tokenizer's characters, concatenated).
std::string decode(const text::Tokenizer& target, const std::vector<std::int32_t>& ids);

/// Exact match and character accuracy of predicted strings against targets: a character is right
/// when the prediction has the same code point at the same position; the denominator is the
/// longer of the two strings, so missing and extra characters both count as errors.
struct StringAccuracy {
  double exact_match = 0, char_accuracy = 0;
};
StringAccuracy string_accuracy(const std::vector<std::string>& predicted, const std::vector<std::string>& targets);

}  // namespace attn::train
