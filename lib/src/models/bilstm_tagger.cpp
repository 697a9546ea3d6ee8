#include "attn/models/bilstm_tagger.h"

#include <torch/script.h>

#include "attn/nn/layers.h"
#include "attn/nn/recurrent.h"
#include "model_support.h"
#include "subword_embedding.h"

namespace attn::models {
namespace tagger {  // this model's parts (a named namespace: the unity build compiles the models together)

const char* kSource = R"(
def emissions(self, ids: Tensor) -> Tensor:
    # ids [B, T] (0 = padding; or with subwords [B, T, 1 + G]) -> each token's score of being marked [B, T]
    mask = self.token_mask(ids)
    h = self.lstm.forward_masked(self.embed(ids), mask)          # [B, T, 2 * lstm_units], padding skipped
    if self.training and self.output_dropout > 0.0:
        h = torch.dropout(h, self.output_dropout, True)
    return self.dense.forward(h).squeeze(2)                      # e_t = w^T h_t

def logits(self, ids: Tensor) -> Tensor:
    # -> each token's log-odds of being marked [B, T]: without a CRF e_t + b; with one, the log-odds of
    # its marginal, log p(y_t = 1 | x) - log p(y_t = 0 | x), plus b (which only the learned threshold moves)
    e = self.emissions(ids)
    if self.has_crf:
        s = self.crf_scores(e, self.token_mask(ids))
        e = s[:, :, 1] - s[:, :, 0]
    return e + self.output_bias

def forward(self, ids: Tensor) -> Tensor:
    # -> p_t = sigmoid(logits_t), the probability that token t is marked; 0 at padding
    mask = self.token_mask(ids)
    logits = self.logits(ids)
    return torch.sigmoid(logits) * mask.to(logits.dtype)

def crf_tags(self, e: Tensor) -> Tensor:
    # the two tags' emissions [B, T, 2]: 0 for "not marked", e_t for "marked"
    return torch.stack([torch.zeros_like(e), e], 2)

def crf_alphas(self, e: Tensor, mask: Tensor) -> List[Tensor]:
    # forward scores a_t(y) = log sum over tag paths ending in y at t of exp(their score) (Lafferty et al. 2001),
    # carried unchanged over the padding after a text
    x = self.crf_tags(e)
    a = self.crf.start.unsqueeze(0) + x[:, 0]
    alphas = [a]
    for t in range(1, x.size(1)):
        step = torch.logsumexp(a.unsqueeze(2) + self.crf.transitions.unsqueeze(0), 1) + x[:, t]
        a = torch.where(mask[:, t].unsqueeze(1), step, a)
        alphas.append(a)
    return alphas

def crf_scores(self, e: Tensor, mask: Tensor) -> Tensor:
    # a_t(y) + b_t(y) [B, T, 2]: the log of the summed scores of the paths through tag y at t
    # (their softmax over y is the marginal); b_t the backward scores, end scores at the last token
    x = self.crf_tags(e)
    alphas = self.crf_alphas(e, mask)
    T = x.size(1)
    b = self.crf.end.unsqueeze(0).expand(x.size(0), 2)
    scores = [alphas[T - 1] + b]
    for t in range(T - 2, -1, -1):
        step = torch.logsumexp(self.crf.transitions.unsqueeze(0) + (x[:, t + 1] + b).unsqueeze(1), 2)
        b = torch.where(mask[:, t + 1].unsqueeze(1), step, b)
        scores.append(alphas[t] + b)
    scores.reverse()
    return torch.stack(scores, 1)

def crf_nll(self, ids: Tensor, targets: Tensor) -> Tensor:
    # -log p(y | x) of each text's tags y (targets [B, T], 0 or 1; padding ignored) [B]
    return self.crf_loss(ids, targets)[0]

def crf_loss(self, ids: Tensor, targets: Tensor) -> Tuple[Tensor, Tensor]:
    # training's step, from one pass of the LSTM: -log p(y | x) of each text [B] =
    # log Z(x) - (start(y_1) + sum_t e_t(y_t) + sum_t>1 transition(y_t-1, y_t) + end(y_last)),
    # and each token's log-odds as logits() gives them [B, T] (the soft F1 of training's loss reads them;
    # the output bias, which only the learned threshold moves, without gradient)
    mask = self.token_mask(ids)
    e = self.emissions(ids)
    x = self.crf_tags(e)
    y = targets.long()
    alphas = self.crf_alphas(e, mask)
    log_z = torch.logsumexp(alphas[len(alphas) - 1] + self.crf.end.unsqueeze(0), 1)
    m = mask.to(e.dtype)
    emitted = (x.gather(2, y.unsqueeze(2)).squeeze(2) * m).sum(1)
    moved = (self.crf.transitions[y[:, :-1], y[:, 1:]] * m[:, 1:]).sum(1)
    last = y.gather(1, (mask.long().sum(1) - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    gold = self.crf.start[y[:, 0]] + emitted + moved + self.crf.end[last]
    nll = (log_z - gold) * (mask.long().sum(1) > 0).to(e.dtype)   # a text with no tokens has no tags to score
    s = self.crf_scores(e, mask)
    return nll, s[:, :, 1] - s[:, :, 0] + self.output_bias.detach()
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
  m.register_module("dense", nn::script::linear(2 * units, 1, /*bias=*/false));
  nn::script::add_parameter(m, "output_bias", torch::zeros({1}));
  // The CRF's scores of the first tag, of a tag after another ([from, to]: 0 not marked, 1 marked)
  // and of the last; they start at 0 (no preference) and stay there without a CRF.
  auto crf = nn::script::new_module("LinearChainCRF");
  nn::script::add_parameter(crf, "start", torch::zeros({2}));
  nn::script::add_parameter(crf, "transitions", torch::zeros({2, 2}));
  nn::script::add_parameter(crf, "end", torch::zeros({2}));
  m.register_module("crf", crf);
  m.register_attribute("has_crf", c10::BoolType::get(), c.at("crf").get<bool>());
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
          {"dense", "Dense, per token: e_t", "(None, T)", "dense"},
          {"crf", c.value("crf", false) ? "Linear-chain CRF: each token's marginal log-odds" : "(no CRF: unused)", "(None, T)", "crf"},
          {"output_bias", "+ output bias, sigmoid per token", "(None, T)", "output_bias"},
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
      "Embedding (words and their character n-grams) -> SpatialDropout1D -> BiLSTM -> Dense per token (-> a linear-chain CRF with "
      "crf=true): which "
      "words of a text people would mark (SemEval-2021 Toxic Spans)",
      {
          {"num_words", 20000, "embedding rows: word indices below this (set from the tokenizer)", true},
          subwords_key(),
          skeletons_key(),
          {"embed_dim", 128, "embedding size"},
          {"spatial_dropout", 0.2, "SpatialDropout1D rate: whole embedding channels dropped for every step"},
          {"lstm_units", 96, "LSTM units per direction"},
          {"lstm_dropout", 0.1, "dropout on the LSTM inputs, one mask per sequence (Keras' dropout)"},
          {"recurrent_dropout", 0.1, "DropConnect on the LSTM's hidden-to-hidden weights"},
          {"output_dropout", 0.2, "dropout on the LSTM's outputs before the per-token Dense"},
          {"crf", false,
           "a linear-chain CRF over the tokens' marked/not tags (trained by the tags' likelihood; a token's probability is its marginal) "
           "instead of an independent sigmoid per token (on Toxic Spans: no better, docs/spans.md)"},
      },
      {{"epochs", 20}, {"batch_size", 32}, {"lr", 1e-3}, {"val_split", 0.1}},
      tagger::build,
      tagger::fit,
      tagger::layers,
      "embedding",
  };
  e.revision = 2;                 // 2: the output bias apart from the Dense, and the optional CRF (1: a sigmoid per token over dense.bias)
  e.output_bias = "output_bias";  // added to each token's log-odds: what the learned threshold moves
  e.ensembles = true;
  return e;
}

}  // namespace attn::models
