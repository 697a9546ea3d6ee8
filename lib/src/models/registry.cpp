#include "attn/models/registry.h"

#include <stdexcept>

#include "attn/models/bilstm_attention.h"
#include "attn/models/feature_attention.h"
#include "attn/models/seq2seq_attention.h"
#include "attn/models/transformer_classifier.h"

namespace attn::models {

// The registry: add a model here, and every command can build, train, explain and export it.
const std::vector<ModelEntry>& models() {
  static const std::vector<ModelEntry> kModels = {
      bilstm_attention_entry(),        // seed 000: word attention on a BiLSTM
      feature_attention_entry(),       // seed 001: softmax attention over input features
      seq2seq_attention_entry(),       // seeds 002, 003: Bahdanau / Luong encoder-decoder attention
      transformer_classifier_entry(),  // seed 003: multi-head self-attention encoder
  };
  return kModels;
}

const char* task_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::kTextClassification: return "text-classification";
    case TaskKind::kFeatureClassification: return "feature-classification";
    case TaskKind::kSequenceToSequence: return "seq2seq";
  }
  return "?";
}

std::int64_t count_parameters(const torch::jit::Module& model, const std::string& prefix) {
  std::int64_t n = 0;
  for (const auto& p : model.named_parameters(true))
    if (p.name.rfind(prefix, 0) == 0) n += p.value.numel();
  return n;
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
  for (const auto& [key, value] : overrides.items()) {
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

nlohmann::json parse_assignment(const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("expected key=value, got '" + assignment + "'");
  const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    value = text;
  }
  return nlohmann::json{{key, value}};
}

}  // namespace attn::models
