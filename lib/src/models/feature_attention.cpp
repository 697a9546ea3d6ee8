#include "attn/models/feature_attention.h"

#include <torch/script.h>

#include "attn/nn/attention.h"
#include "attn/nn/layers.h"
#include "model_support.h"

namespace attn::models {
namespace feature {  // this model's parts (a named namespace: the unity build compiles the models together)

// The hidden layers are written out one by one, the source generated for the configured list: a
// module list to loop over exists only in TorchScript compiled from Python (nn.ModuleList), not
// in source compiled by Module::define(), whose submodules are named attributes.
std::string source(std::size_t hidden_layers) {
  std::string s = R"(
def logits(self, x: Tensor) -> Tuple[Tensor, Tensor]:
    # x [B, D] -> (logit [B, 1], alpha [B, D])
    h, alpha = self.attention.forward(x, None)      # alpha = softmax(W x + b); h = alpha (.) x
)";
  for (std::size_t i = 0; i < hidden_layers; ++i) s += "    h = torch.relu(self.hidden" + std::to_string(i) + ".forward(h))\n";
  s += R"(    return self.output.forward(h), alpha

def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:
    logit, alpha = self.logits(x)
    return torch.sigmoid(logit), alpha
)";
  return s;
}

std::vector<std::int64_t> hidden_sizes(const nlohmann::json& c) {
  std::vector<std::int64_t> sizes;
  for (const auto& v : c.at("hidden")) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
      throw std::invalid_argument("feature-attention: config key 'hidden' must list positive layer sizes, got " + c.at("hidden").dump());
    sizes.push_back(v.get<std::int64_t>());
  }
  return sizes;
}

torch::jit::Module build(const nlohmann::json& c, nn::Runtime) {  // no recurrent layer: one build
  const std::int64_t d = c.at("features");
  nn::require_config(d > 0, "feature-attention: features must be positive");
  const std::vector<std::int64_t> hidden = hidden_sizes(c);
  auto m = nn::script::new_module("FeatureAttentionClassifier");
  m.register_module("attention", nn::FeatureAttention(d).module());
  std::int64_t in = d;
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    m.register_module("hidden" + std::to_string(i), nn::script::linear(in, hidden[i]));
    in = hidden[i];
  }
  m.register_module("output", nn::script::linear(in, 1));
  nn::script::define(m, source(hidden.size()), "feature-attention");
  return m;
}

std::vector<LayerRow> layers(const nlohmann::json& c) {
  const std::string d = std::to_string(c.at("features").get<std::int64_t>());
  std::vector<LayerRow> rows = {
      {"input", "Input (features)", "(None, " + d + ")", ""},
      {"attention", "Dense softmax (attention vector)", "(None, " + d + ")", "attention"},
      {"weighted", "Multiply (alpha * x)", "(None, " + d + ")", ""},
  };
  const std::vector<std::int64_t> hidden = hidden_sizes(c);
  for (std::size_t i = 0; i < hidden.size(); ++i)
    rows.push_back({"hidden" + std::to_string(i), "Dense relu", "(None, " + std::to_string(hidden[i]) + ")", "hidden" + std::to_string(i)});
  rows.push_back({"output", "Dense sigmoid", "(None, 1)", "output"});
  return rows;
}

/// The data fixes the number of features; the output is one 0/1 label.
void fit(nlohmann::json& c, const nlohmann::json& given, const DataSizes& data) {
  fit_exact(c, given, "features", data.features);
  if (data.labels != 1) throw std::runtime_error("feature-attention predicts one 0/1 label, the data has " + std::to_string(data.labels));
}

}  // namespace feature

ModelEntry feature_attention_entry() {
  return ModelEntry{
      "feature-attention",
      ModelKind::kFeatureClassifier,
      "Seed 001: softmax attention over the input features (alpha (.) x) -> optional hidden layers -> Dense "
      "sigmoid, binary classification of numeric rows",
      {
          {"features", 10, "input features D (set from the CSV's feature columns)", true},
          {"hidden", nlohmann::json::array(), "sizes of ReLU hidden layers after the attention, e.g. [32] (none: the seed's model)"},
      },
      // The seed's model.fit(X, y, epochs=16, batch_size=128, validation_split=0.3) with Adam's defaults.
      {{"epochs", 16}, {"batch_size", 128}, {"lr", 1e-3}, {"val_split", 0.3}},
      feature::build,
      feature::fit,
      feature::layers,
  };
}

}  // namespace attn::models
