#pragma once
/// attn evaluate for the non-text models: score every row of a CSV with a saved model and measure
/// it against the CSV's labels or targets.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/saved_model.h"

namespace attn::models {

struct CsvEvaluation {
  nlohmann::ordered_json metrics;  ///< {} when the CSV has no labels / targets
  std::string predictions_csv;     ///< one line per row, with a header
  std::vector<std::string> feature_names;
  std::vector<double> mean_attention;  ///< feature-attention: mean weight per feature over the rows
};

/// feature-attention: the model's feature columns (and label column, if present) of `csv`.
/// Metrics: log loss, accuracy, ROC AUC, mean attention per feature. Predictions: row,
/// probability, predicted label.
CsvEvaluation evaluate_features(SavedModel& model, const std::string& csv, std::int64_t batch_size);

/// seq2seq-attention: `source_column` (and `target_column`, if present) of `csv`. Metrics: exact
/// match and character accuracy. Predictions: source, target, prediction.
CsvEvaluation evaluate_translations(SavedModel& model, const std::string& csv, const std::string& source_column,
                                    const std::string& target_column, std::int64_t batch_size, int threads);

}  // namespace attn::models
