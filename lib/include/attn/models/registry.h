#pragma once
/// The model registry: one explicit list (models() in registry.cpp) of every model attn can build,
/// each with a description, its configuration keys (default and one-line doc) and a factory.
/// Apps build and rebuild models only through it; a model's name and full configuration travel
/// inside every saved model, so loading needs nothing else.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/script.h>

namespace attn::models {

struct ConfigKey {
  std::string name;
  nlohmann::json default_value;
  std::string doc;
};

/// A row of `attn summary`'s Keras-like table.
struct LayerRow {
  std::string name, type, output_shape;
  std::int64_t params = 0;
};

/// What a model learns from, which fixes how its data is read, batched, scored and explained.
enum class TaskKind {
  kTextClassification,     ///< text -> labels (Keras tokenizer + padding): logits(ids [B, T])
  kFeatureClassification,  ///< numeric features -> one 0/1 label: logits(x [B, D])
  kSequenceToSequence,     ///< character string -> character string: logits(src [B, S], target_in [B, T])
};
const char* task_name(TaskKind kind);

struct ModelEntry {
  std::string name;
  TaskKind task;
  std::string description;
  std::vector<ConfigKey> keys;
  /// Builds a fresh (randomly initialised) TorchScript model from a complete configuration.
  std::function<torch::jit::Module(const nlohmann::json& config)> build;
  /// The layer table of a built model (for `attn summary`).
  std::function<std::vector<LayerRow>(const torch::jit::Module& model, const nlohmann::json& config)> layers;
};

/// Parameters of `model` whose dotted name starts with `prefix` (for the layer tables).
std::int64_t count_parameters(const torch::jit::Module& model, const std::string& prefix);

/// Every registered model, in a fixed order.
const std::vector<ModelEntry>& models();
/// The entry called `name`; throws std::invalid_argument listing the valid names.
const ModelEntry& find_model(const std::string& name);
/// Defaults of `entry`, then `overrides` on top. Unknown keys and values of the wrong JSON type
/// throw std::invalid_argument naming the key.
nlohmann::json resolve_config(const ModelEntry& entry, const nlohmann::json& overrides);
/// Parses a `--set key=value` string into {key: value} (value as JSON if it parses, else a string).
nlohmann::json parse_assignment(const std::string& assignment);

}  // namespace attn::models
