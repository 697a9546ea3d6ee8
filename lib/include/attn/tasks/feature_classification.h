#pragma once
/// Feature classification (feature-attention, seed 001): numeric feature columns of a CSV and one
/// 0/1 label column, binary cross-entropy; explained per feature.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tasks/task.h"

namespace attn::tasks {

/// config.json's "data" block of a feature classifier.
struct FeatureDataConfig {
  std::string csv;  ///< the run's copy of the training CSV
  std::int64_t rows = 0;
  std::vector<std::string> features;
  std::string label = "label";
  std::vector<std::string> examples;  ///< a few training rows as VALUE,VALUE,... (the explain page's examples)
  /// Each feature's mean over the training CSV's rows: the baseline of the importance methods (a
  /// removed feature is set to it). Empty in models saved before attn 0.3: the baseline is then 0.
  std::vector<float> means;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FeatureDataConfig, csv, rows, features, label, examples, means)

const Task& feature_classification();

}  // namespace attn::tasks
