#pragma once
/// Reading a typed struct (nlohmann's to_json / from_json) from a JSON document a user may have
/// edited or damaged (config.json, a checkpoint's state): every key must hold the kind of value
/// the struct's defaults hold there, so `"epochs": 1e49` is an error naming "epochs" instead of
/// a float converted to an int out of range (undefined behaviour, found by the config fuzzer).
#include <string>

#include <nlohmann/json.hpp>

namespace attn::io {

/// Throws std::invalid_argument naming the key path (e.g. "training.epochs") when `value` differs in
/// kind from `example`: an integer where the example holds an integer, a number where it holds a
/// number, the same type otherwise; objects are checked key by key (keys the example lacks are
/// left to the reader), arrays element by element against the example's first element. A null
/// example accepts anything.
void check_like(const nlohmann::json& value, const nlohmann::json& example, const std::string& where = "");

/// `j` as T after check_like(j, T{}): T's from_json then never converts a value of another kind.
template <class T>
T get_like(const nlohmann::json& j) {
  check_like(j, nlohmann::json(T{}));
  return j.get<T>();
}

}  // namespace attn::io
