#pragma once
// Helpers for the model tests.
#include <filesystem>
#include <string>
#include <utility>

#include <torch/script.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include "attn/models/registry.h"

namespace models_test {

/// The registry's model `name` with `overrides`, built with seed 1, in eval mode.
inline torch::jit::Module build(const std::string& name, const nlohmann::json& overrides,
                                attn::nn::Runtime runtime = attn::nn::Runtime::kPortable) {
  torch::manual_seed(1);
  const auto& entry = attn::models::find_model(name);
  torch::jit::Module m = entry.build(attn::models::resolve_config(entry, overrides), runtime);
  m.eval();
  return m;
}

inline std::int64_t parameter_count(const torch::jit::Module& m) {
  std::int64_t n = 0;
  for (const auto& p : m.named_parameters(true)) n += p.value.numel();
  return n;
}

inline std::pair<torch::Tensor, torch::Tensor> pair_of(const c10::IValue& v) {
  const auto t = v.toTuple();
  return {t->elements()[0].toTensor(), t->elements()[1].toTensor()};
}

/// An empty scratch directory for this test process.
inline std::filesystem::path scratch(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("attn_models_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace models_test
