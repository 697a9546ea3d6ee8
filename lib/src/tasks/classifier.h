#pragma once
// What the two 0/1-label classifier tasks share (text_classification.cpp: a label per column;
// feature_classification.cpp: one label): the loss they train with, the positive class's weights,
// their metrics and decision thresholds, and the predictions CSV. Internal to the tasks layer.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/tasks/task.h"

namespace attn::tasks {

/// Binary cross-entropy of `logits` [rows, labels] against 0/1 `targets`, the positive class weighed
/// by `pos_weight` [labels] when defined; and Keras' binary accuracy, (logit > 0) == target.
Loss binary_loss(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& pos_weight);

/// Dataset::positive_weights over 0/1 `labels` [all rows, n_labels] row-major for `rows`: "" none,
/// "auto" negatives / positives per label, "w1,w2,..." given.
torch::Tensor positive_weights_of(const std::string& spec, const std::vector<float>& labels, std::size_t n_labels,
                                  const std::vector<std::int64_t>& rows);

/// evaluate's "thresholds" input.
data::InputSpec thresholds_input();

/// The decision thresholds of a full evaluation (--thresholds: "0.5", "auto" or "t1,t2,..."),
/// checked against the label count before any work.
class Thresholds {
 public:
  /// From the task's evaluate inputs; a bad spec throws std::invalid_argument naming --thresholds.
  Thresholds(const data::Inputs& options, std::size_t labels);
  Thresholds() = default;
  const std::string& spec() const { return spec_; }

 private:
  std::string spec_ = "0.5";
};

/// A classifier's metrics of rows with probabilities `probs` and 0/1 labels `y` (both [rows,
/// labels] row-major; rows with keep[row] false left out, keep empty: all): loss, accuracy, AUC per
/// label and their mean, and with Detail::kFull the decisions at `thresholds` (precision, recall, F1).
nlohmann::ordered_json classifier_metrics(const std::vector<float>& probs, const std::vector<float>& y, const std::vector<bool>& keep,
                                          const std::vector<std::string>& labels, EvaluateOptions::Detail detail,
                                          const Thresholds& thresholds);

/// The predictions CSV: `key_header` then one column per name of `columns`, a line per row: its key,
/// then its probabilities [rows, columns] (6 decimals); with `prediction`, a last column
/// "prediction", 1 when p > 0.5 (one-label classifiers).
std::string predictions_csv(const std::string& key_header, const std::vector<std::string>& keys, const std::vector<std::string>& columns,
                            const std::vector<float>& probs, bool prediction);

}  // namespace attn::tasks
