#pragma once
// What the model files share when they fit a configuration to a data set (ModelEntry::fit).
// Internal to the models layer.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace attn::models {

/// For entry.fit: `key` must be `value` (a count the data fixes, e.g. labels).
void fit_exact(nlohmann::json& config, const nlohmann::json& given, const std::string& key, std::int64_t value);
/// For entry.fit: `key` becomes `preferred` unless given; a given value must be at least `minimum`
/// (a limit the data must fit in, e.g. embedding rows or the longest text).
void fit_at_least(nlohmann::json& config, const nlohmann::json& given, const std::string& key, std::int64_t minimum,
                  std::int64_t preferred);

}  // namespace attn::models
