#pragma once
/// Model configuration overrides as users give them: a JSON file (--config) and `--set key=value`
/// assignments on top. The registry (registry.h) checks the keys and types they name.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::models {

/// Parses a `--set key=value` string into {key: value} (value as JSON if it parses, else a string).
nlohmann::json parse_assignment(const std::string& assignment);
/// Model config overrides: the JSON object in `config_file` (if not empty), then each `--set` assignment.
nlohmann::json read_overrides(const std::string& config_file, const std::vector<std::string>& assignments);

}  // namespace attn::models
