#include "attn/models/registry.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "attn/io/atomic_file.h"
#include "attn/models/bilstm_attention.h"
#include "attn/models/bilstm_tagger.h"
#include "attn/models/feature_attention.h"
#include "attn/models/hierarchical_attention.h"
#include "attn/models/overrides.h"
#include "attn/models/seq2seq_attention.h"
#include "attn/models/transformer_classifier.h"
#include "attn/nn/script_module.h"
#include "model_support.h"

namespace attn::models {

// The registry: add a model here, and every command can build, train, explain and export it.
const std::vector<ModelEntry>& models() {
  static const std::vector<ModelEntry> kModels = {
      bilstm_attention_entry(),        // seed 000: word attention on a BiLSTM
      feature_attention_entry(),       // seed 001: softmax attention over input features
      seq2seq_attention_entry(),       // seeds 002, 003: Bahdanau / Luong encoder-decoder attention
      transformer_classifier_entry(),  // seed 003: multi-head self-attention encoder
      hierarchical_attention_entry(),  // Yang et al. 2016: word, then sentence attention
      bilstm_tagger_entry(),           // SemEval-2021 Toxic Spans: which words people mark, per token
  };
  return kModels;
}

const ModelEntry& find_model(const std::string& name) {
  std::string valid;
  for (const ModelEntry& m : models()) {
    if (m.name == name) return m;
    valid += (valid.empty() ? "" : ", ") + m.name;
  }
  throw std::invalid_argument("unknown model '" + name + "' (models: " + valid + ")");
}

namespace {

bool same_kind(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return !(a.is_number_integer() && !b.is_number_integer());
  return a.type() == b.type();
}

}  // namespace

nlohmann::json resolve_config(const ModelEntry& entry, const nlohmann::json& overrides) {
  nlohmann::json config = nlohmann::json::object();
  for (const ConfigKey& k : entry.keys) config[k.name] = k.default_value;
  if (overrides.is_null()) return config;
  if (!overrides.is_object()) throw std::invalid_argument("model config must be a JSON object");
  for (const auto& item : overrides.items()) {
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    auto it = std::find_if(entry.keys.begin(), entry.keys.end(), [&](const ConfigKey& k) { return k.name == key; });
    if (it == entry.keys.end()) {
      std::string valid;
      for (const ConfigKey& k : entry.keys) valid += (valid.empty() ? "" : ", ") + k.name;
      throw std::invalid_argument("model '" + entry.name + "' has no config key '" + key + "' (keys: " + valid + ")");
    }
    if (!same_kind(it->default_value, value))
      throw std::invalid_argument("config key '" + key + "' of model '" + entry.name + "' expects a value like " +
                                  it->default_value.dump() + ", got " + value.dump());
    config[key] = value;
  }
  return config;
}

nlohmann::json fit_config(const ModelEntry& entry, const nlohmann::json& overrides, const DataSizes& data) {
  nlohmann::json config = resolve_config(entry, overrides);
  entry.fit(config, overrides.is_object() ? overrides : nlohmann::json::object(), data);
  return config;
}

void fit_exact(nlohmann::json& config, const nlohmann::json& given, const std::string& key, std::int64_t value) {
  if (!given.contains(key)) {
    config[key] = value;
  } else if (config.at(key) != value) {
    throw std::invalid_argument("config key '" + key + "' must be the data's " + std::to_string(value) + ", got " + config.at(key).dump());
  }
}

void fit_at_least(nlohmann::json& config, const nlohmann::json& given, const std::string& key, std::int64_t minimum,
                  std::int64_t preferred) {
  if (!given.contains(key)) {
    config[key] = std::max(minimum, preferred);
  } else if (config.at(key).get<std::int64_t>() < minimum) {
    throw std::invalid_argument("config key '" + key + "' must be at least the data's " + std::to_string(minimum) + ", got " +
                                config.at(key).dump());
  }
}

ConfigKey output_key() {
  return {"output", "sigmoid",
          "sigmoid (each label 0/1 on its own, the seed's) or softmax (one class per row); set from the data (--labels or --label-column)",
          true};
}

void fit_output(nlohmann::json& config, const nlohmann::json& given, const DataSizes& data) {
  const std::string wanted = data.one_class_per_row ? "softmax" : "sigmoid";
  if (!given.contains("output")) {
    config["output"] = wanted;
  } else if (config.at("output") != wanted) {
    throw std::invalid_argument("config key 'output' must be the data's \"" + wanted + "\" (" +
                                (data.one_class_per_row ? "one class per row" : "0/1 label columns") + "), got " +
                                config.at("output").dump());
  }
}

void define_output(torch::jit::Module& m, const nlohmann::json& config, const std::string& what) {
  const std::string output = config.value("output", "sigmoid");
  nn::require_config(output == "sigmoid" || output == "softmax",
                     what + ": output must be \"sigmoid\" or \"softmax\", got \"" + output + "\"");
  // p = sigmoid(z) per label, or p = softmax(z) over the classes: exp(z_k) / sum_j exp(z_j)
  nn::script::define(m,
                     output == "softmax" ? R"(
def probabilities(self, logits: Tensor) -> Tensor:
    return torch.softmax(logits, 1)
)"
                                         : R"(
def probabilities(self, logits: Tensor) -> Tensor:
    return torch.sigmoid(logits)
)",
                     what);
}

LayerTable layer_table(const ModelEntry& entry, const torch::jit::Module& module, const nlohmann::json& config) {
  LayerTable t;
  for (const LayerRow& row : entry.layers(config)) t.rows.push_back({row, 0});
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    t.total += p.value.numel();
    int owners = 0;
    for (LayerCount& r : t.rows) {
      const std::string& prefix = r.row.parameters;
      if (prefix.empty() || (p.name != prefix && p.name.rfind(prefix + ".", 0) != 0)) continue;
      r.count += p.value.numel();
      ++owners;
    }
    if (owners == 0) t.unassigned.push_back(p.name);
    if (owners > 1) t.ambiguous.push_back(p.name);
  }
  return t;
}

}  // namespace attn::models
