// Model configuration overrides as users give them (see overrides.h).
#include "attn/models/overrides.h"

#include <stdexcept>

#include "attn/io/atomic_file.h"

namespace attn::models {

nlohmann::json parse_assignment(const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--set: expected key=value, got '" + assignment + "'");
  const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    value = text;
  }
  return nlohmann::json{{key, value}};
}

nlohmann::json read_overrides(const std::string& config_file, const std::vector<std::string>& assignments) {
  nlohmann::json overrides = nlohmann::json::object();
  if (!config_file.empty()) {
    try {
      overrides = nlohmann::json::parse(io::read_file(config_file));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(config_file + ": not valid JSON: " + e.what());
    }
    if (!overrides.is_object()) throw std::runtime_error(config_file + ": expected a JSON object of model config keys");
  }
  for (const std::string& a : assignments) overrides.update(parse_assignment(a));
  return overrides;
}

}  // namespace attn::models
