#include "attn/io/json_like.h"

#include <stdexcept>

namespace attn::io {

namespace {

std::string kind_of(const nlohmann::json& example) {
  if (example.is_number_integer()) return "an integer";
  if (example.is_number()) return "a number";
  if (example.is_string()) return "a string";
  if (example.is_boolean()) return "true or false";
  if (example.is_object()) return "an object";
  return "an array";
}

bool same_kind(const nlohmann::json& value, const nlohmann::json& example) {
  if (example.is_number_integer()) return value.is_number_integer();
  if (example.is_number()) return value.is_number();
  return value.type() == example.type();
}

}  // namespace

void check_like(const nlohmann::json& value, const nlohmann::json& example, const std::string& where) {
  if (example.is_null()) return;
  if (!same_kind(value, example)) {
    std::string shown = value.dump();
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    throw std::invalid_argument((where.empty() ? "the document" : "\"" + where + "\"") + " must be " + kind_of(example) + ", got " + shown);
  }
  if (example.is_object()) {
    for (const auto& item : example.items()) {
      auto it = value.find(item.key());
      if (it != value.end()) check_like(*it, item.value(), where.empty() ? item.key() : where + "." + item.key());
    }
  } else if (example.is_array() && !example.empty()) {
    for (std::size_t i = 0; i < value.size(); ++i) check_like(value[i], example[0], where + "[" + std::to_string(i) + "]");
  }
}

}  // namespace attn::io
