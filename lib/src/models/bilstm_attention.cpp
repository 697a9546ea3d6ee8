#include "attn/models/bilstm_attention.h"

#include <torch/script.h>

#include "attn/nn/attention.h"
#include "attn/nn/layers.h"
#include "attn/nn/recurrent.h"
#include "model_support.h"
#include "subword_embedding.h"

namespace attn::models {
namespace bilstm {  // this model's parts (a named namespace: the unity build compiles the models together)

const char* kSource = R"(
def logits_embedded(self, x: Tensor, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # x [B, T, embed_dim] the words' embeddings (or any point on a path to them), ids [B, T] (0 =
    # padding; or with subwords [B, T, 1 + G]) -> (logits [B, labels], attention [B, T]): what the
    # gradient methods differentiate
    mask = self.token_mask(ids)
    h = self.lstm.forward_masked(x, mask)                        # [B, T, 2 * lstm_units], padding skipped
    s, attention = self.attention.forward(h, mask)               # word attention, padding masked
    return self.dense.forward(s), attention

def embeddings(self, ids: Tensor) -> Tensor:
    # ids [B, T] (or [B, T, 1 + G]) -> the words' embeddings [B, T, embed_dim], as evaluation mode reads them
    return self.lookup(ids)

def logits(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # ids [B, T] (0 = padding) -> (logits [B, labels], attention [B, T])
    return self.logits_embedded(self.embed(ids), ids)            # embeddings dropped out while training

def forward(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    logits, attention = self.logits(ids)
    return self.probabilities(logits), attention
)";

torch::jit::Module build(const nlohmann::json& c, nn::Runtime runtime) {
  const std::int64_t num_words = c.at("num_words"), embed = c.at("embed_dim"), units = c.at("lstm_units"), labels = c.at("labels");
  nn::require_config(num_words > 1 && embed > 0 && units > 0 && labels > 0, "bilstm-attention: sizes must be positive");
  for (const char* k : {"spatial_dropout", "lstm_dropout", "recurrent_dropout"}) {
    const double p = c.at(k);
    nn::require_config(p >= 0 && p < 1, c10::str("bilstm-attention: ", k, " must be in [0, 1), got ", p));
  }
  auto m = nn::script::new_module("BiLSTMAttention");
  const auto keras_uniform = [&](std::int64_t rows) { return torch::empty({rows, embed}).uniform_(-0.05, 0.05); };
  {
    torch::NoGradGuard no_grad;  // Keras' Embedding initialiser: uniform(-0.05, 0.05)
    nn::script::add_parameter(m, "embedding", keras_uniform(num_words));
  }
  m.register_module("lstm", nn::script::bilstm(embed, units, c.at("recurrent_dropout").get<double>(), runtime));
  m.register_module("attention", nn::WordAttention(nn::WordAttentionOptions(2 * units).runtime(runtime)).module());
  m.register_module("dense", nn::script::linear(2 * units, labels));
  m.register_attribute("spatial_dropout", c10::FloatType::get(), c.at("spatial_dropout").get<double>());
  m.register_attribute("lstm_dropout", c10::FloatType::get(), c.at("lstm_dropout").get<double>());
  define_lookup(m, c, keras_uniform, "bilstm-attention");
  define_dropped_embed(m, c, runtime, "bilstm-attention");
  define_output(m, c, "bilstm-attention");
  nn::script::define(m, kSource, "bilstm-attention");
  return m;
}

std::vector<LayerRow> layers(const nlohmann::json& c) {
  const std::string d = std::to_string(c.at("embed_dim").get<std::int64_t>());
  const std::string h = std::to_string(2 * c.at("lstm_units").get<std::int64_t>());
  const std::string labels = std::to_string(c.at("labels").get<std::int64_t>());
  return with_subword_row(
      {
          {"input", "Input (word ids)", "(None, T)", ""},
          {"embedding", "Embedding", "(None, T, " + d + ")", "embedding"},
          {"spatial_dropout", "SpatialDropout1D", "(None, T, " + d + ")", ""},
          {"lstm", "Bidirectional LSTM", "(None, T, " + h + ")", "lstm"},
          {"attention.mlp", "Dense tanh (u = tanh(W h + b))", "(None, T, " + h + ")", "attention.mlp"},
          {"attention.context", "Dense (v^T u)", "(None, T, 1)", "attention.context"},
          {"attention", "masked softmax, sum_t alpha_t h_t", "(None, " + h + ")", ""},
          {"dense", "Dense " + c.value("output", std::string("sigmoid")), "(None, " + labels + ")", "dense"},
      },
      c, d);
}

/// The data fixes the labels, and the embedding needs a row for every id the tokenizer emits.
void fit(nlohmann::json& c, const nlohmann::json& given, const DataSizes& data) {
  fit_exact(c, given, "labels", data.labels);
  fit_output(c, given, data);
  fit_at_least(c, given, "num_words", data.vocabulary, data.vocabulary);
  fit_subwords(c, given, data);
}

}  // namespace bilstm

ModelEntry bilstm_attention_entry() {
  ModelEntry e{
      "bilstm-attention",
      ModelKind::kTextClassifier,
      "Seed 000: Embedding -> SpatialDropout1D -> BiLSTM -> word attention (Yang et al.) -> Dense sigmoid (or softmax), "
      "multi-label text classification (Kaggle Jigsaw)",
      {
          {"num_words", 20000, "embedding rows: word indices below this (set from the tokenizer's num_words)", true},
          {"labels", 6, "outputs: the label columns, or the classes (set from the data)", true},
          output_key(),
          subwords_key(),
          skeletons_key(),
          {"embed_dim", 128, "embedding size"},
          {"spatial_dropout", 0.35, "SpatialDropout1D rate: whole embedding channels dropped for every step"},
          {"lstm_units", 60, "LSTM units per direction (attention works on 2 x this)"},
          {"lstm_dropout", 0.15, "dropout on the LSTM inputs, one mask per sequence (Keras' dropout)"},
          {"recurrent_dropout", 0.15,
           "DropConnect on the LSTM's hidden-to-hidden weights, standing in for Keras' recurrent_dropout "
           "(LibTorch's fused LSTM has no per-step recurrent dropout)"},
      },
      // The seed's model.fit(X_t, y, validation_split=.2, epochs=3, batch_size=512) with Adam's defaults.
      {{"epochs", 3}, {"batch_size", 512}, {"lr", 1e-3}, {"val_split", 0.2}},
      bilstm::build,
      bilstm::fit,
      bilstm::layers,
      "embedding",
  };
  e.output_bias = "dense.bias";  // dense: the logits
  e.ensembles = true;
  return e;
}

}  // namespace attn::models
