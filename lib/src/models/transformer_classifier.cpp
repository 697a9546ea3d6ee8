#include "attn/models/transformer_classifier.h"

#include <cmath>

#include <torch/script.h>

#include "attn/nn/attention.h"
#include "attn/nn/layers.h"
#include "attn/nn/transformer.h"
#include "model_support.h"
#include "subword_embedding.h"

namespace attn::models {
namespace transformer {  // this model's parts (a named namespace: the unity build compiles the models together)

// The encoder stack is written out layer by layer (TorchScript source is generated for N layers).
// The encoder layers are called one by one, the source generated for the configured count: a module
// list to loop over exists only in TorchScript compiled from Python (nn.ModuleList), not in source
// compiled by Module::define(), whose submodules are named attributes.
std::string source(std::int64_t layers) {
  std::string s = R"(
def embeddings(self, ids: Tensor) -> Tensor:
    # ids [B, T] (or with subwords [B, T, 1 + G]) -> the tokens' embeddings [B, T, d_model] (before
    # scaling and positions)
    return self.lookup(ids)

def encode_embedded(self, e: Tensor, ids: Tensor) -> Tuple[Tensor, List[Tensor]]:
    # e [B, T, d_model] the tokens' embeddings (or any point on a path to them), ids [B, T] (0 =
    # padding, anywhere) -> (states [B, T, d_model], self-attention per layer [B, heads, T, T])
    mask = self.token_mask(ids)
    positions = (torch.cumsum(mask.to(ids.dtype), 1) - 1).clamp(0)   # 0 at each text's first token
    assert ids.size(1) <= self.max_length, "transformer-classifier: text longer than max_length tokens"
    x = e * self.scale                                           # token embedding x sqrt(d_model)
    x = x + torch.embedding(self.position.pe, positions)         # + PE(position)
    x = torch.dropout(x, self.dropout, self.training)
    weights: List[Tensor] = []
)";
  for (std::int64_t i = 0; i < layers; ++i) s += "    x, w = self.layer" + std::to_string(i) + ".forward(x, mask)\n    weights.append(w)\n";
  s += R"(    return x, weights

def encode(self, ids: Tensor) -> Tuple[Tensor, List[Tensor]]:
    return self.encode_embedded(self.embeddings(ids), ids)

def logits_embedded(self, e: Tensor, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # e [B, T, d_model] the tokens' embeddings -> (logits [B, labels], attention [B, T])
    x, _ = self.encode_embedded(e, ids)
    s, attention = self.attention.forward(x, self.token_mask(ids))           # word-attention pooling, padding masked
    return self.dense.forward(s), attention

def logits(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    return self.logits_embedded(self.embeddings(ids), ids)

def forward(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    logits, attention = self.logits(ids)
    return self.probabilities(logits), attention

def self_attention(self, ids: Tensor) -> List[Tensor]:
    _, weights = self.encode(ids)
    return weights
)";
  return s;
}

torch::jit::Module build(const nlohmann::json& c, nn::Runtime) {  // no recurrent layer: one build
  const std::int64_t num_words = c.at("num_words"), labels = c.at("labels"), d = c.at("d_model"), heads = c.at("heads"),
                     layers = c.at("layers"), ff = c.at("feedforward"), max_length = c.at("max_length");
  const double dropout = c.at("dropout");
  nn::require_config(num_words > 1 && labels > 0 && d > 0 && heads > 0 && layers > 0 && ff > 0 && max_length > 0,
                     "transformer-classifier: sizes must be positive");
  nn::require_config(d % heads == 0, c10::str("transformer-classifier: d_model (", d, ") must be a multiple of heads (", heads, ")"));
  nn::require_config(dropout >= 0 && dropout < 1, "transformer-classifier: dropout must be in [0, 1)");
  auto m = nn::script::new_module("TransformerClassifier");
  const auto normal = [&](std::int64_t rows) { return torch::randn({rows, d}) * (1.0 / std::sqrt(static_cast<double>(d))); };
  {
    torch::NoGradGuard no_grad;
    nn::script::add_parameter(m, "embedding", normal(num_words));
  }
  define_lookup(m, c, normal, "transformer-classifier");
  m.register_module("position", nn::script::positional_encoding(d, max_length));
  for (std::int64_t i = 0; i < layers; ++i)
    m.register_module("layer" + std::to_string(i),
                      nn::script::transformer_encoder_layer(nn::TransformerLayerOptions(d, heads).dim_feedforward(ff).dropout(dropout)));
  m.register_module("attention", nn::WordAttention(nn::WordAttentionOptions(d)).module());
  m.register_module("dense", nn::script::linear(d, labels));
  m.register_attribute("scale", c10::FloatType::get(), std::sqrt(static_cast<double>(d)));
  m.register_attribute("dropout", c10::FloatType::get(), dropout);
  m.register_attribute("max_length", c10::IntType::get(), max_length);
  define_output(m, c, "transformer-classifier");
  nn::script::define(m, source(layers), "transformer-classifier");
  return m;
}

std::vector<LayerRow> layers(const nlohmann::json& c) {
  const std::string d = std::to_string(c.at("d_model").get<std::int64_t>());
  const std::string heads = std::to_string(c.at("heads").get<std::int64_t>());
  std::vector<LayerRow> rows = {
      {"input", "Input (word ids)", "(None, T)", ""},
      {"embedding", "Embedding x sqrt(d_model)", "(None, T, " + d + ")", "embedding"},
      {"position", "sinusoidal positional encoding", "(None, T, " + d + ")", ""},
  };
  for (std::int64_t i = 0; i < c.at("layers").get<std::int64_t>(); ++i) {
    const std::string name = "layer" + std::to_string(i);
    rows.push_back({name, "TransformerEncoderLayer (" + heads + " heads)", "(None, T, " + d + ")", name});
  }
  rows.push_back({"attention", "word attention pooling", "(None, " + d + ")", "attention"});
  rows.push_back({"dense", "Dense " + c.value("output", std::string("sigmoid")),
                  "(None, " + std::to_string(c.at("labels").get<std::int64_t>()) + ")", "dense"});
  return with_subword_row(std::move(rows), c, d);
}

/// As bilstm-attention, and the positional table must cover the longest text.
void fit(nlohmann::json& c, const nlohmann::json& given, const DataSizes& data) {
  fit_exact(c, given, "labels", data.labels);
  fit_output(c, given, data);
  fit_at_least(c, given, "num_words", data.vocabulary, data.vocabulary);
  fit_subwords(c, given, data);
  fit_at_least(c, given, "max_length", data.input_length, std::max<std::int64_t>(512, data.input_length));
}

}  // namespace transformer

ModelEntry transformer_classifier_entry() {
  ModelEntry e{
      "transformer-classifier",
      ModelKind::kTextClassifier,
      "Seed 003: token + positional embedding -> Transformer encoder layers (multi-head self-attention) -> "
      "word-attention pooling -> Dense sigmoid (or softmax), for the same CSVs as bilstm-attention",
      {
          {"num_words", 20000, "embedding rows (set from the tokenizer's num_words)", true},
          {"labels", 6, "outputs: the label columns, or the classes (set from the data)", true},
          output_key(),
          subwords_key(),
          skeletons_key(),
          {"d_model", 64, "model size E (embedding and every layer)"},
          {"heads", 4, "attention heads per layer (d_model must be a multiple)"},
          {"layers", 2, "encoder layers"},
          {"feedforward", 128, "hidden size of each layer's feed-forward network"},
          {"dropout", 0.1, "dropout on embeddings, attention weights and sublayer outputs"},
          {"max_length", 512, "longest text in tokens (rows of the positional table; at least the data's maxlen)", true},
      },
      // The main job's recipe (seed 003 trains nothing): 3 epochs, Adam 1e-3, the last 20% held out;
      // batch 64, since self-attention learns less per step than the BiLSTM at the seed's 512.
      {{"epochs", 3}, {"batch_size", 64}, {"lr", 1e-3}, {"val_split", 0.2}},
      transformer::build,
      transformer::fit,
      transformer::layers,
      "embedding",
  };
  e.output_bias = "dense.bias";  // dense: the logits
  // Not ensembles: LibTorch 1.13's TorchScript alias analysis, compiling a method of a module that
  // holds several of these models, grows without bound (3 one-layer members: 30 s; 2 two-layer
  // members: out of memory).
  e.ensembles = false;
  return e;
}

}  // namespace attn::models
