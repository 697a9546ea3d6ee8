#pragma once
/// attn evaluate's work, one function per task: score every row of a CSV with a saved model and
/// measure it against the CSV's labels or targets.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/saved_model.h"

namespace attn::models {

struct CsvEvaluation {
  std::int64_t rows = 0;           ///< rows scored
  nlohmann::ordered_json metrics;  ///< {} when the CSV has no labels / targets
  std::string predictions_csv;     ///< one line per row, with a header
  std::vector<std::string> feature_names;
  std::vector<double> mean_attention;  ///< feature-attention: mean weight per feature over the rows
};

/// Text classifiers: `text_column` of `csv`, tokenised and padded exactly as the training data was
/// with the model's own tokenizer. Predictions in Kaggle's sample_submission layout (id + one
/// probability per label). Labels from the CSV's label columns or, when `labels_csv` is not empty,
/// from Kaggle's test_labels.csv layout (rows with -1 are skipped). Metrics: per-label and mean ROC
/// AUC, log loss, accuracy, rows scored and skipped.
CsvEvaluation evaluate_text(SavedModel& model, const std::string& csv, const std::string& text_column,
                            const std::string& id_column, const std::string& labels_csv, std::int64_t batch_size,
                            int threads);

/// feature-attention: the model's feature columns (and label column, if present) of `csv`.
/// Metrics: log loss, accuracy, ROC AUC, mean attention per feature. Predictions: row,
/// probability, predicted label.
CsvEvaluation evaluate_features(SavedModel& model, const std::string& csv, std::int64_t batch_size);

/// seq2seq-attention: `source_column` (and `target_column`, if present) of `csv`. Metrics: exact
/// match and character accuracy. Predictions: source, target, prediction.
CsvEvaluation evaluate_translations(SavedModel& model, const std::string& csv, const std::string& source_column,
                                    const std::string& target_column, std::int64_t batch_size, int threads);

}  // namespace attn::models
