#pragma once
// Helpers for the data tests.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "attn/data/inputs.h"

namespace data_test {

/// Inputs with `values` given and, for the rest of `defaults_from`, their defaults.
inline attn::data::Inputs given(std::initializer_list<std::pair<std::string, std::string>> values,
                                const std::vector<attn::data::InputSpec>& defaults_from = {}) {
  attn::data::Inputs in;
  for (const auto& s : defaults_from)
    if (!s.default_value.empty()) in.set(s.name, s.default_value, attn::data::Inputs::Origin::kDefault);
  for (const auto& [k, v] : values) in.set(k, v, attn::data::Inputs::Origin::kGiven);
  return in;
}

/// A file of this process's in the temporary folder, attn_PREFIX_NAME_PID.csv, holding `content`.
inline std::string temp_csv(const std::string& prefix, const std::string& name, const std::string& content) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("attn_" + prefix + "_" + name + "_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

}  // namespace data_test
