#include "attn/models/hierarchical_attention.h"

#include <torch/script.h>

#include "attn/nn/attention.h"
#include "attn/nn/fused_embedding.h"
#include "attn/nn/layers.h"
#include "attn/nn/recurrent.h"
#include "model_support.h"

namespace attn::models {
namespace han {  // this model's parts (a named namespace: the unity build compiles the models together)

// The input is a row of word ids per document, each carrying its sentence (text/sentences.h):
// id = word + 2^20 x sentence, 0 = padding. levels_embedded rebuilds the batch's sentences as one
// batch of their own (every sentence of every document, [N, W], no empty ones) for the word level,
// and the documents as rows of sentence vectors ([B, D]) for the sentence level (Yang et al. 2016):
//
//   words      h_it = BiGRU(x_it),  u_it = tanh(W_w h_it + b_w),  alpha_it = softmax_t(u_w^T u_it),
//              s_i = sum_t alpha_it h_it
//   sentences  h_i = BiGRU(s_i),    u_i = tanh(W_s h_i + b_s),    alpha_i = softmax_i(u_s^T u_i),
//              v = sum_i alpha_i h_i
//   output     p = sigmoid(W_c v + b_c)
//
// Padding words and empty sentences are masked at both levels; a document with no word gets v = 0.
// The sentences' words [N, W] -> their embeddings [N, W, E], times a SpatialDropout1D mask per
// sentence and channel while training.
const char* kLookupSource = R"(
def channel_mask(self, words: Tensor) -> Tensor:
    # [N, 1, E]: whole channels of a sentence dropped while training, ones otherwise
    keep = torch.ones([words.size(0), 1, self.embedding.size(1)], dtype=self.embedding.dtype, device=words.device)
    if self.training and self.dropout > 0.0:
        keep = torch.dropout(keep, self.dropout, True)
    return keep

def sentence_words(self, words: Tensor) -> Tensor:
    x = self.embedding.index_select(0, words.reshape(-1)).reshape([words.size(0), words.size(1), self.embedding.size(1)])
    return x * self.channel_mask(words)
)";

// The same on attn's kernel (fused_embedding.h: the lookup and the mask in one pass, and a backward
// pass that adds the rows in one sweep), with the same mask (the same random draws): native builds.
const char* kLookupNativeSource = R"(
def channel_mask(self, words: Tensor) -> Tensor:
    keep = torch.ones([words.size(0), 1, self.embedding.size(1)], dtype=self.embedding.dtype, device=words.device)
    if self.training and self.dropout > 0.0:
        keep = torch.dropout(keep, self.dropout, True)
    return keep

def sentence_words(self, words: Tensor) -> Tensor:
    return attn.embedding_scaled(self.embedding, words, self.channel_mask(words))
)";

const char* kSource = R"(
def words_of(self, ids: Tensor) -> Tensor:
    # the word ids, without their sentences
    return torch.remainder(ids, 1048576)

def embeddings(self, ids: Tensor) -> Tensor:
    # ids [B, T] -> the words' embeddings [B, T, embed_dim], as evaluation mode reads them (rows
    # picked with index_select, here and in levels: its backward pass adds the rows in one sweep, where
    # torch.embedding's adds each position's row on its own, 20 ms a batch of 64 documents)
    rows = self.embedding.index_select(0, self.words_of(ids).reshape(-1))
    return rows.reshape([ids.size(0), ids.size(1), self.embedding.size(1)])

def levels(self, x: Optional[Tensor], ids: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    # x [B, T, E] the words' embeddings (or any point on a path to them; None: the table's rows,
    # looked up for the real words only), ids [B, T]
    # -> (logits [B, labels], each word's weight within its sentence [B, T], its sentence's weight [B, T])
    B = ids.size(0)
    T = ids.size(1)
    real = (ids != 0).reshape(-1)                                   # [B*T]
    sentence = torch.div(ids, 1048576, rounding_mode='floor')
    S = 1
    if ids.numel() > 0:
        S = int(sentence.max()) + 1
    # Sentences of the batch, keyed (row, sentence); padding sorts last, under the key B*S.
    rows = torch.arange(B, device=ids.device).unsqueeze(1)
    key = torch.where(ids != 0, rows * S + sentence, torch.full_like(ids, B * S)).reshape(-1)
    counts = torch.bincount(key, minlength=B * S + 1)               # words per key
    sorted_key, order = torch.sort(key, stable=True)               # tokens by sentence, in order
    start = torch.cumsum(counts, 0) - counts                        # a key's first sorted token
    position = torch.arange(B * T, device=ids.device) - start.index_select(0, sorted_key)
    counts = counts[:B * S]
    keys = torch.nonzero(counts > 0).squeeze(1)                     # the batch's sentences [N]
    N = keys.size(0)
    if N == 0:                                                      # no document has a word
        zero = torch.zeros([B, T], dtype=self.embedding.dtype, device=ids.device)
        v = torch.zeros([B, self.dense.weight.size(1)], dtype=self.embedding.dtype, device=ids.device)
        return self.dense.forward(v), zero, zero
    # Word level: every sentence of the batch in one [N, W] batch, its words first (the slots after
    # them hold some word of the batch, which neither direction of the GRU reads into a real step).
    lengths = counts.index_select(0, keys)                          # [N]
    slot = torch.arange(int(lengths.max()), device=ids.device).unsqueeze(0)
    in_sentence = slot < lengths.unsqueeze(1)                       # [N, W]
    source = torch.where(in_sentence, start.index_select(0, keys).unsqueeze(1) + slot, torch.zeros_like(slot))
    token = order.index_select(0, source.reshape(-1))               # [N * W] positions of ids
    if x is None:                                                   # x_it  [N, W, E], dropped out while training
        words = self.sentence_words(self.words_of(ids).reshape(-1).index_select(0, token).reshape([N, -1]))
    else:
        words = x.reshape(B * T, -1).index_select(0, token).reshape([N, -1, x.size(2)])
        words = words * self.channel_mask(words)
    h = self.word_gru.forward_lengths(words, lengths)               # h_it  [N, W, 2H]
    s, word_alpha = self.word_attention.forward(h, in_sentence)     # s_i [N, 2H], alpha_it [N, W]
    # Sentence level: each document's sentences in order, [B, D].
    doc = torch.div(keys, S, rounding_mode='floor')                 # [N]
    per_doc = torch.bincount(doc, minlength=B)                      # [B]
    first = torch.cumsum(per_doc, 0) - per_doc                      # a document's first sentence
    dslot = torch.arange(int(per_doc.max()), device=ids.device).unsqueeze(0)
    in_doc = dslot < per_doc.unsqueeze(1)                           # [B, D]
    which = torch.where(in_doc, first.unsqueeze(1) + dslot, torch.zeros_like(dslot))
    sentences = s.index_select(0, which.reshape(-1)).reshape([B, -1, s.size(1)]) * in_doc.unsqueeze(-1).to(s.dtype)
    hs = self.sentence_gru.forward_lengths(sentences, per_doc)      # h_i  [B, D, 2H]
    v, sentence_alpha = self.sentence_attention.forward(hs, in_doc) # v [B, 2H], alpha_i [B, D]
    # Back to the tokens: each real token's (sentence, slot) and (document, sentence) weights.
    number = torch.cumsum((counts > 0).long(), 0) - 1               # a key's sentence number n
    sorted_real = sorted_key < B * S
    n = torch.where(sorted_real, number.index_select(0, torch.clamp(sorted_key, max=B * S - 1)), torch.zeros_like(sorted_key))
    at = torch.where(sorted_real, position, torch.zeros_like(position))
    word_sorted = word_alpha[n, at] * sorted_real.to(word_alpha.dtype)
    sentence_sorted = sentence_alpha[doc.index_select(0, n), n - first.index_select(0, doc.index_select(0, n))]
    sentence_sorted = sentence_sorted * sorted_real.to(sentence_alpha.dtype)
    word_weight = torch.zeros_like(word_sorted).scatter(0, order, word_sorted).reshape([B, T])
    sentence_weight = torch.zeros_like(sentence_sorted).scatter(0, order, sentence_sorted).reshape([B, T])
    return self.dense.forward(v), word_weight, sentence_weight

def logits_embedded(self, x: Tensor, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # -> (logits [B, labels], attention [B, T]): a word's effective weight alpha_i x alpha_it (a row sums to 1)
    logits, word_weight, sentence_weight = self.levels(x, ids)
    return logits, word_weight * sentence_weight

def attention_levels(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # ids [B, T] -> (each word's weight within its sentence [B, T], its sentence's weight [B, T])
    logits, word_weight, sentence_weight = self.levels(None, ids)
    return word_weight, sentence_weight

def logits(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # ids [B, T] (word + 2^20 x sentence, 0 = padding) -> (logits [B, labels], attention [B, T]);
    # logits_embedded(embeddings(ids), ids), with the embedding rows read for the real words only
    logits, word_weight, sentence_weight = self.levels(None, ids)
    return logits, word_weight * sentence_weight

def forward(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    logits, attention = self.logits(ids)
    return self.probabilities(logits), attention
)";

torch::jit::Module build(const nlohmann::json& c, nn::Runtime runtime) {
  const std::int64_t num_words = c.at("num_words"), embed = c.at("embed_dim"), units = c.at("gru_units"), labels = c.at("labels");
  nn::require_config(num_words > 1 && embed > 0 && units > 0 && labels > 0, "hierarchical-attention: sizes must be positive");
  nn::require_config(num_words <= (1 << 20), "hierarchical-attention: num_words must be at most 2^20 (ids carry their sentence above)");
  const double dropout = c.at("dropout");
  nn::require_config(dropout >= 0 && dropout < 1, c10::str("hierarchical-attention: dropout must be in [0, 1), got ", dropout));
  auto m = nn::script::new_module("HierarchicalAttention");
  {
    torch::NoGradGuard no_grad;  // Keras' Embedding initialiser, as bilstm-attention
    nn::script::add_parameter(m, "embedding", torch::empty({num_words, embed}).uniform_(-0.05, 0.05));
  }
  m.register_module("word_gru", nn::script::bigru(embed, units, runtime));
  m.register_module("word_attention", nn::WordAttention(nn::WordAttentionOptions(2 * units).runtime(runtime)).module());
  m.register_module("sentence_gru", nn::script::bigru(2 * units, units, runtime));
  m.register_module("sentence_attention", nn::WordAttention(nn::WordAttentionOptions(2 * units).runtime(runtime)).module());
  m.register_module("dense", nn::script::linear(2 * units, labels));
  m.register_attribute("dropout", c10::FloatType::get(), dropout);
  if (runtime == nn::Runtime::kNative) {
    nn::register_fused_embedding();
    nn::script::define(m, kLookupNativeSource, "hierarchical-attention (native)");
  } else {
    nn::script::define(m, kLookupSource, "hierarchical-attention");
  }
  define_output(m, c, "hierarchical-attention");
  nn::script::define(m, kSource, "hierarchical-attention");
  return m;
}

std::vector<LayerRow> layers(const nlohmann::json& c) {
  const std::string d = std::to_string(c.at("embed_dim").get<std::int64_t>());
  const std::string h = std::to_string(2 * c.at("gru_units").get<std::int64_t>());
  const std::string labels = std::to_string(c.at("labels").get<std::int64_t>());
  return {
      {"input", "Input (word ids with their sentence)", "(None, T)", ""},
      {"embedding", "Embedding", "(None, T, " + d + ")", "embedding"},
      {"sentences", "regroup: every sentence of the batch", "(N, W, " + d + ")", ""},
      {"word_gru", "Bidirectional GRU over each sentence", "(N, W, " + h + ")", "word_gru"},
      {"word_attention.mlp", "Dense tanh (u_it = tanh(W_w h_it + b_w))", "(N, W, " + h + ")", "word_attention.mlp"},
      {"word_attention.context", "Dense (u_w^T u_it)", "(N, W, 1)", "word_attention.context"},
      {"word_attention", "masked softmax, s_i = sum_t alpha_it h_it", "(N, " + h + ")", ""},
      {"documents", "regroup: each document's sentences", "(None, D, " + h + ")", ""},
      {"sentence_gru", "Bidirectional GRU over the sentences", "(None, D, " + h + ")", "sentence_gru"},
      {"sentence_attention.mlp", "Dense tanh (u_i = tanh(W_s h_i + b_s))", "(None, D, " + h + ")", "sentence_attention.mlp"},
      {"sentence_attention.context", "Dense (u_s^T u_i)", "(None, D, 1)", "sentence_attention.context"},
      {"sentence_attention", "masked softmax, v = sum_i alpha_i h_i", "(None, " + h + ")", ""},
      {"dense", "Dense " + c.value("output", std::string("sigmoid")), "(None, " + labels + ")", "dense"},
  };
}

/// The data fixes the labels, and the embedding needs a row for every id the tokenizer emits.
void fit(nlohmann::json& c, const nlohmann::json& given, const DataSizes& data) {
  fit_exact(c, given, "labels", data.labels);
  fit_output(c, given, data);
  fit_at_least(c, given, "num_words", data.vocabulary, data.vocabulary);
}

}  // namespace han

ModelEntry hierarchical_attention_entry() {
  ModelEntry e{
      "hierarchical-attention",
      ModelKind::kTextClassifier,
      "Yang et al. 2016: Embedding -> BiGRU over each sentence's words -> word attention -> BiGRU over the "
      "sentences -> sentence attention -> Dense sigmoid (or softmax), multi-label document classification",
      {
          {"num_words", 20000, "embedding rows: word indices below this (set from the tokenizer's num_words; at most 2^20)", true},
          {"labels", 6, "outputs: the label columns, or the classes (set from the data)", true},
          output_key(),
          {"embed_dim", 200, "embedding size (Yang et al.'s 200)"},
          {"gru_units", 50, "GRU units per direction at both levels (Yang et al.'s 50; attention works on 2 x this)"},
          {"dropout", 0.2,
           "SpatialDropout1D per sentence while training: whole embedding channels of a sentence dropped (not in the paper: "
           "the embedding here is learnt from scratch)"},
      },
      // Yang et al.'s mini-batches of 64 documents; Adam's defaults in place of their tuned SGD with
      // momentum 0.9; 3 epochs with the held-out 20% of the main job's recipe.
      {{"epochs", 3}, {"batch_size", 64}, {"lr", 1e-3}, {"val_split", 0.2}},
      han::build,
      han::fit,
      han::layers,
      "embedding",
  };
  e.reads_sentences = true;
  e.output_bias = "dense.bias";  // dense: the logits
  e.ensembles = true;
  return e;
}

}  // namespace attn::models
