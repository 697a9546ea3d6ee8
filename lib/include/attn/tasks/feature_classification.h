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
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FeatureDataConfig, csv, rows, features, label, examples)

const Task& feature_classification();

}  // namespace attn::tasks
