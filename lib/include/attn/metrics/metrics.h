#pragma once
/// The metrics of attn's tasks, computed once for every surface (validation epochs, metrics.jsonl,
/// `attn evaluate`, the server): the names are listed in task.h and docs/commands.md.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::metrics {

/// Area under the ROC curve (the Kaggle Jigsaw metric) of `scores` against 0/1 `labels`, with tied
/// scores given their average rank. NaN when only one class is present.
double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels);

/// Classifier metrics over probabilities and 0/1 labels, both row-major [rows, labels].
struct BinaryMetrics {
  std::int64_t rows = 0;          ///< rows scored
  std::int64_t rows_skipped = 0;  ///< rows without labels (Kaggle's -1 rows)
  double loss = 0;                ///< mean binary cross-entropy over rows and labels (p clipped to [1e-7, 1 - 1e-7])
  double accuracy = 0;            ///< mean over rows and labels of (p > 0.5) == y (Keras' binary accuracy)
  std::vector<double> auc;        ///< per label; NaN where undefined
  double mean_auc = 0;            ///< mean of the defined per-label AUCs (NaN if none)
};

/// Rows with keep[row] == false are skipped (keep empty: all rows).
BinaryMetrics binary_metrics(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_labels,
                             const std::vector<bool>& keep = {});

/// {"loss", "accuracy", "auc": {label: AUC or null}, "mean_auc" (or null), "rows", "rows_skipped"}.
nlohmann::ordered_json to_json(const BinaryMetrics& m, const std::vector<std::string>& label_names);

/// Metrics of a classifier with one class per row (multi-class), over probabilities [rows, classes]
/// and one-hot labels of the same shape (row-major). The decision is the most probable class (the
/// first on a tie).
struct ClassMetrics {
  std::int64_t rows = 0;          ///< rows scored
  std::int64_t rows_skipped = 0;  ///< rows with keep[row] false
  double loss = 0;                ///< mean cross-entropy, -log p(the row's class), p clipped to [1e-7, 1 - 1e-7]
  double accuracy = 0;            ///< share of rows whose decision is their class
  /// Per class, of the decisions: precision, recall and F1 (0 where undefined, as scikit-learn).
  std::vector<double> precision, recall, f1;
  /// Mean of the classes' F1 over the classes present among the rows' classes or decisions
  /// (scikit-learn's f1_score(average="macro")).
  double macro_f1 = 0;
  std::vector<double> auc;  ///< one-vs-rest ROC AUC per class (its probability, its rows positive); NaN where undefined
  double mean_auc = 0;      ///< mean of the defined one-vs-rest AUCs (NaN if none)
  /// Hand & Till's (2001) multi-class AUC: over every pair of classes (a, b), on the rows of a or b,
  /// the mean of AUC(p_a, a positive) and AUC(p_b, b positive); the mean over the pairs with rows of
  /// both (scikit-learn's roc_auc_score(multi_class="ovo", average="macro"), HateXplain's metric).
  double ovo_auc = 0;
  std::vector<std::vector<std::int64_t>> confusion;  ///< [the row's class][the decision]: row counts
};
ClassMetrics class_metrics(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_classes,
                           const std::vector<bool>& keep = {});

/// Post-hoc logit adjustment for macro-F1 (in the manner of Menon et al. 2021's logit adjustment,
/// tuned rather than set from the class priors): per-class offsets b added to the log-probabilities,
/// each row then deciding argmax_k log p_k + b_k (the softmax of the logits + b), chosen on labelled
/// rows to maximise class_metrics' macro-F1. b_0 = 0 (only differences matter); the others by
/// coordinate ascent from 0 over -2, -1.9, ..., 2, a class at a time in order, a change kept only
/// when it raises the macro-F1 (the smaller |b| on ties), until a round changes nothing (at most 20).
/// (A span tagger's threshold is the same adjustment of its one output: tasks/span_tagging.h.)
struct LogitAdjustment {
  std::vector<double> offsets;
  std::string metric = "macro_f1";  ///< what the offsets maximise
  double before = 0, after = 0;     ///< the metric on the rows without and with them
};
LogitAdjustment macro_f1_offsets(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_classes);

/// {"loss", "accuracy", "macro_f1", "ovo_auc", "mean_auc", "auc": {class: AUC or null}, "rows",
/// "rows_skipped"}; `full` adds "precision", "recall", "f1" ({class: number}) and "confusion"
/// ({class: {decided class: rows}}).
nlohmann::ordered_json to_json(const ClassMetrics& m, const std::vector<std::string>& class_names, bool full);

/// Per-label decisions: a row is predicted positive for a label when p >= the label's threshold.
struct Decisions {
  std::vector<double> threshold, precision, recall, f1;
};
/// `thresholds`: "0.5" (one for every label), "t1,t2,..." (one per label) or "auto" (each label's
/// threshold of best F1 on these rows). A label without positives or predictions has precision,
/// recall or F1 0. Bad specs throw std::invalid_argument naming --thresholds.
Decisions decisions(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_labels, const std::vector<bool>& keep,
                    const std::string& thresholds);
/// Checks a --thresholds spec for `n_labels` labels (what decisions() would refuse).
void check_thresholds(const std::string& thresholds, std::size_t n_labels);
/// Adds "thresholds", "precision", "recall" and "f1", each {label: number}, to `metrics`.
void add_to(nlohmann::ordered_json& metrics, const Decisions& d, const std::vector<std::string>& label_names);

/// Exact match and character accuracy of predicted strings against targets: a character is right
/// when the prediction has the same code point at the same position; the denominator is the
/// longer of the two strings, so missing and extra characters both count as errors.
struct StringAccuracy {
  double exact_match = 0, char_accuracy = 0;
};
/// One output against its target: exact (1 or 0), right characters, and the longer length.
struct StringTally {
  double exact = 0, right = 0, total = 0;
};
StringTally string_tally(const std::string& predicted, const std::string& target);
StringAccuracy string_accuracy(const std::vector<std::string>& predicted, const std::vector<std::string>& targets);

/// A number, or null for NaN (JSON has no NaN).
nlohmann::ordered_json number_or_null(double v);

}  // namespace attn::metrics
