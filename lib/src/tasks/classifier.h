#pragma once
// What the classifier tasks share (text_classification.cpp: a 0/1 label per column, or one class
// per row; feature_classification.cpp: one 0/1 label): the losses they train with and their
// weights, their metrics and decision thresholds, and the predictions CSV. Internal to the tasks layer.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/tasks/task.h"

namespace attn::tasks {

/// How a classifier's outputs are read: each label its own 0/1 (sigmoids, binary cross-entropy), or
/// one class per row (a softmax over the classes, cross-entropy).
enum class LabelKind { kIndependent, kOneClass };

/// Binary cross-entropy of `logits` [rows, labels] against 0/1 `targets`, the positive class weighed
/// by `pos_weight` [labels] when defined, each row's terms by `row_weights` [rows] when defined (the
/// mean over rows and labels of w_r x loss_rk); and Keras' binary accuracy, (logit > 0) == target.
Loss binary_loss(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& pos_weight,
                 const torch::Tensor& row_weights = {});

/// Cross-entropy of `logits` [rows, classes] against one-hot `targets`, each row's loss weighed by
/// its class's weight in `class_weight` [classes] when defined, averaged over the rows (Keras'
/// class_weight: sum of weighted losses / rows, so a share of the rows carries its share of the
/// loss), and by `row_weights` [rows] when defined; and accuracy, argmax(logits) == the class.
Loss class_loss(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& class_weight,
                const torch::Tensor& row_weights = {});

/// Attention supervised with human rationales (HateXplain's BiRNN-HateXplain; Mathew et al. 2021):
/// the cross-entropy between a row's rationale g (its marked tokens, normalised to sum 1) and the
/// model's attention a over the same positions, -sum_t g_t log a_t, averaged over the batch's rows
/// (a row without a rationale, g = 0, adds 0 and still counts, as in the classification loss's
/// mean). `attention`, `targets`: [rows, T].
torch::Tensor rationale_loss(const torch::Tensor& attention, const torch::Tensor& targets);
/// Counterfactual logit pairing (Garg et al. 2019, "Counterfactual Fairness in Text Classification
/// through Robustness"): for the rows of a batch of `rows` rows that have an identity-swapped copy,
/// `logits` [pairs, K] of the rows and `copy_logits` [pairs, K] of their copies,
///   (1 / rows) x sum over pairs of mean over k of |z_k(x) - z_k(x')|,
/// z the logits of 0/1 labels, the log-probabilities of one class per row (softmax's logits are
/// only defined up to a shift). A row without a copy adds 0 and still counts, as in rationale_loss.
torch::Tensor counterfactual_loss(const torch::Tensor& logits, const torch::Tensor& copy_logits, LabelKind kind, std::int64_t rows);

/// Dataset::loss_weights of a classifier over its `labels` [all rows, n_labels] (0/1, or one-hot
/// with kOneClass) for `rows`. kIndependent takes --pos-weight ("" none, "auto" negatives / positives
/// per label, "w1,w2,..." given), kOneClass takes --class-weight ("" none, "balanced" rows / (classes
/// x the class's rows), as scikit-learn's, "w1,w2,..." given); the other flag is an error.
torch::Tensor loss_weights_of(const LossWeights& spec, LabelKind kind, const std::vector<float>& labels, std::size_t n_labels,
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

/// A classifier's metrics of rows with probabilities `probs` and labels `y` (both [rows, labels]
/// row-major; rows with keep[row] false left out, keep empty: all). kIndependent: loss, accuracy,
/// AUC per label and their mean, and with Detail::kFull the decisions at `thresholds` (precision,
/// recall, F1); kOneClass: metrics.h's ClassMetrics (the decision is the most probable class).
nlohmann::ordered_json classifier_metrics(const std::vector<float>& probs, const std::vector<float>& y, const std::vector<bool>& keep,
                                          const std::vector<std::string>& labels, LabelKind kind, EvaluateOptions::Detail detail,
                                          const Thresholds& thresholds);
/// The numbers classifier_metrics reports for every validation epoch (Dataset::metric_names).
std::vector<std::string> classifier_metric_names(LabelKind kind);

/// What the predictions CSV adds after the probabilities: nothing (Kaggle's sample_submission
/// layout), "prediction" 1 when p > 0.5 (one-label classifiers), or "prediction" the most probable
/// of `columns` (one class per row).
enum class PredictionColumn { kNone, kPositive, kClass };
/// The predictions CSV: `key_header` then one column per name of `columns`, a line per row: its key,
/// then its probabilities [rows, columns] (6 decimals), then the prediction column.
std::string predictions_csv(const std::string& key_header, const std::vector<std::string>& keys, const std::vector<std::string>& columns,
                            const std::vector<float>& probs, PredictionColumn prediction);

}  // namespace attn::tasks
