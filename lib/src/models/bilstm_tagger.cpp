#include "attn/models/bilstm_tagger.h"

#include <torch/script.h>

#include "attn/nn/layers.h"
#include "attn/nn/recurrent.h"
#include "model_support.h"
#include "subword_embedding.h"

namespace attn::models {
namespace tagger {  // this model's parts (a named namespace: the unity build compiles the models together)

const char* kSource = R"(
def logits(self, ids: Tensor) -> Tensor:
    # ids [B, T] (0 = padding; or with subwords [B, T, 1 + G]) -> each token's logit [B, T]
    mask = self.token_mask(ids)
    h = self.lstm.forward_masked(self.embed(ids), mask)          # [B, T, 2 * lstm_units], padding skipped
    if self.training and self.output_dropout > 0.0:
        h = torch.dropout(h, self.output_dropout, True)
    return self.dense.forward(h).squeeze(2)                      # z_t = w^T h_t + b

def forward(self, ids: Tensor) -> Tensor:
    # -> p_t = sigmoid(z_t), the probability that token t is marked; 0 at padding
    mask = self.token_mask(ids)
    logits = self.logits(ids)
    return torch.sigmoid(logits) * mask.to(logits.dtype)
)";

torch::jit::Module build(const nlohmann::json& c, nn::Runtime runtime) {
  const std::int64_t num_words = c.at("num_words"), embed = c.at("embed_dim"), units = c.at("lstm_units");
  nn::require_config(num_words > 1 && embed > 0 && units > 0, "bilstm-tagger: sizes must be positive");
  for (const char* k : {"spatial_dropout", "lstm_dropout", "recurrent_dropout", "output_dropout"}) {
    const double p = c.at(k);
    nn::require_config(p >= 0 && p < 1, c10::str("bilstm-tagger: ", k, " must be in [0, 1), got ", p));
  }
  auto m = nn::script::new_module("BiLSTMTagger");
  const auto keras_uniform = [&](std::int64_t rows) { return torch::empty({rows, embed}).uniform_(-0.05, 0.05); };
  {
    torch::NoGradGuard no_grad;  // Keras' Embedding initialiser: uniform(-0.05, 0.05)
    nn::script::add_parameter(m, "embedding", keras_uniform(num_words));
  }
  m.register_module("lstm", nn::script::bilstm(embed, units, c.at("recurrent_dropout").get<double>(), runtime));
  m.register_module("dense", nn::script::linear(2 * units, 1));
  for (const char* k : {"spatial_dropout", "lstm_dropout", "output_dropout"})
    m.register_attribute(k, c10::FloatType::get(), c.at(k).get<double>());
  define_lookup(m, c, keras_uniform, "bilstm-tagger");
  define_dropped_embed(m, c, runtime, "bilstm-tagger");
  nn::script::define(m, kSource, "bilstm-tagger");
  return m;
}

std::vector<LayerRow> layers(const nlohmann::json& c) {
  const std::string d = std::to_string(c.at("embed_dim").get<std::int64_t>());
  const std::string h = std::to_string(2 * c.at("lstm_units").get<std::int64_t>());
  return with_subword_row(
      {
          {"input", "Input (word ids)", "(None, T)", ""},
          {"embedding", "Embedding", "(None, T, " + d + ")", "embedding"},
          {"spatial_dropout", "SpatialDropout1D", "(None, T, " + d + ")", ""},
          {"lstm", "Bidirectional LSTM", "(None, T, " + h + ")", "lstm"},
          {"dense", "Dense sigmoid, per token", "(None, T)", "dense"},
      },
      c, d);
}

/// The embedding needs a row for every id the tokenizer emits; the n-gram rows are the data's.
void fit(nlohmann::json& c, const nlohmann::json& given, const DataSizes& data) {
  fit_at_least(c, given, "num_words", data.vocabulary, data.vocabulary);
  fit_subwords(c, given, data);
}

}  // namespace tagger

ModelEntry bilstm_tagger_entry() {
  ModelEntry e{
      "bilstm-tagger",
      ModelKind::kSpanTagger,
      "Embedding (words and their character n-grams) -> SpatialDropout1D -> BiLSTM -> Dense sigmoid per token: which "
      "words of a text people would mark (SemEval-2021 Toxic Spans)",
      {
          {"num_words", 20000, "embedding rows: word indices below this (set from the tokenizer)", true},
          subwords_key(),
          {"embed_dim", 128, "embedding size"},
          {"spatial_dropout", 0.2, "SpatialDropout1D rate: whole embedding channels dropped for every step"},
          {"lstm_units", 96, "LSTM units per direction"},
          {"lstm_dropout", 0.1, "dropout on the LSTM inputs, one mask per sequence (Keras' dropout)"},
          {"recurrent_dropout", 0.1, "DropConnect on the LSTM's hidden-to-hidden weights"},
          {"output_dropout", 0.2, "dropout on the LSTM's outputs before the per-token Dense"},
      },
      {{"epochs", 20}, {"batch_size", 32}, {"lr", 1e-3}, {"val_split", 0.1}},
      tagger::build,
      tagger::fit,
      tagger::layers,
      "embedding",
  };
  e.output_bias = "dense.bias";  // the per-token logit's bias, which the learned threshold moves
  e.ensembles = true;
  return e;
}

}  // namespace attn::models
