#pragma once
// What the model files share when they fit a configuration to a data set (ModelEntry::fit).
// Internal to the models layer.
#include <cstdint>
#include <string>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/models/registry.h"

namespace attn::models {

/// For entry.fit: `key` must be `value` (a count the data fixes, e.g. labels).
void fit_exact(nlohmann::json& config, const nlohmann::json& given, const std::string& key, std::int64_t value);
/// For entry.fit: `key` becomes `preferred` unless given; a given value must be at least `minimum`
/// (a limit the data must fit in, e.g. embedding rows or the longest text).
void fit_at_least(nlohmann::json& config, const nlohmann::json& given, const std::string& key, std::int64_t minimum,
                  std::int64_t preferred);

/// The text classifiers' "output" key: how their logits become probabilities.
ConfigKey output_key();
/// For entry.fit: "output" follows the data: "softmax" for one class per row, else "sigmoid".
void fit_output(nlohmann::json& config, const nlohmann::json& given, const DataSizes& data);
/// Defines `probabilities(logits) -> probabilities` on `m` as config's "output" says (forward's
/// last step); a bad value throws std::invalid_argument naming the key.
void define_output(torch::jit::Module& m, const nlohmann::json& config, const std::string& what);

}  // namespace attn::models
