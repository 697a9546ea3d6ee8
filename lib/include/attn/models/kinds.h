#pragma once
/// What kind of model an entry of the registry is: a fact about its TorchScript interface, which
/// fixes the task that trains and uses it (lib/src/tasks/). One typed facade per kind is the only
/// place that calls a model's methods by name.
///
///   text classifier     forward(ids [B, T] int64, 0 = padding) -> (probabilities [B, L], attention [B, T]);
///                       logits(ids) -> (logits [B, L], attention);
///                       optionally self_attention(ids) -> per layer [B, heads, T, T];
///                       embeddings(ids) -> the word embeddings x [B, T, E] (evaluation mode) and
///                       logits_embedded(x, ids) -> logits(ids) computed from x (the mask from ids):
///                       what the gradient methods differentiate (models saved since attn 0.3);
///                       hierarchical models: attention_levels(ids) -> (word weights within their
///                       sentences [B, T], each word's sentence weight [B, T]), and ids carrying
///                       each word's sentence (text/sentences.h)
///   feature classifier  forward(x [B, D] float) -> (probability [B, 1], attention [B, D]); logits(x)
///   seq2seq             logits(src [B, S], target_in [B, T]) -> (logits [B, T, V], attention [B, T, S]);
///                       source_embeddings(src) -> x [B, S, E] and logits_embedded(x, src, target_in)
///                       (models saved since attn 0.3);
///                       translate(src, max_length) -> (ids [B, T'], attention [B, T', S]);
///                       beam_search(src, beam, max_length) -> the same (models saved since attn 0.2);
///                       attributes start_id, end_id, max_output_length
///   span tagger         forward(ids [B, T] int64, 0 = padding) -> each token's probability of being
///                       marked [B, T] (0 at padding); logits(ids) -> the same as logits [B, T]
#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>

namespace attn::models {

enum class ModelKind { kTextClassifier, kFeatureClassifier, kSeq2Seq, kSpanTagger };

/// Throws std::runtime_error naming `what` (a file) when `module` lacks a method or attribute of `kind`.
void require_interface(ModelKind kind, const torch::jit::Module& module, const std::string& what);

/// A method's two outputs: scores (probabilities, logits or ids) and the attention weights.
struct Scored {
  torch::Tensor scores, attention;
};

class TextClassifier {
 public:
  explicit TextClassifier(torch::jit::Module module) : module_(std::move(module)) {}
  /// The module (a handle: copies share it).
  const torch::jit::Module& module() const { return module_; }
  Scored forward(const torch::Tensor& ids);
  Scored logits(const torch::Tensor& ids);
  /// What training's loss reads: each member's logits and attention for an ensemble
  /// (models/ensemble.h), else {logits(ids)}.
  std::vector<Scored> member_logits(const torch::Tensor& ids);
  bool has_self_attention() const;
  std::vector<torch::Tensor> self_attention(const torch::Tensor& ids);
  /// Whether the file has embeddings and logits_embedded (the gradient methods need them).
  bool has_embedded() const;
  torch::Tensor embeddings(const torch::Tensor& ids);
  Scored logits_embedded(const torch::Tensor& x, const torch::Tensor& ids);
  /// Whether the model reads sentences (it has attention_levels).
  bool has_sentences() const;
  /// Hierarchical models: (word weights within their sentences, each word's sentence weight), [B, T] each.
  std::pair<torch::Tensor, torch::Tensor> attention_levels(const torch::Tensor& ids);

 private:
  torch::jit::Module module_;
};

class FeatureClassifier {
 public:
  explicit FeatureClassifier(torch::jit::Module module) : module_(std::move(module)) {}
  Scored forward(const torch::Tensor& x);
  Scored logits(const torch::Tensor& x);

 private:
  torch::jit::Module module_;
};

class Seq2SeqModel {
 public:
  explicit Seq2SeqModel(torch::jit::Module module) : module_(std::move(module)) {}
  /// Teacher forcing: target_in = start id, y_1 .. y_{T-1}.
  Scored logits(const torch::Tensor& source, const torch::Tensor& target_in);
  /// Whether the file has source_embeddings and logits_embedded (the gradient methods need them).
  bool has_embedded() const;
  torch::Tensor source_embeddings(const torch::Tensor& source);
  /// logits(source, target_in) computed from the source's embeddings x [B, S, E].
  Scored logits_embedded(const torch::Tensor& x, const torch::Tensor& source, const torch::Tensor& target_in);
  /// Greedy decoding: ids [B, T'] (the end id, then 0), attention [B, T', S].
  Scored translate(const torch::Tensor& source, std::int64_t max_length);
  /// Beam search with `beam` hypotheses per row, the best by mean log-probability per character;
  /// the same outputs as translate. Throws std::runtime_error for a model file without it.
  Scored beam_search(const torch::Tensor& source, std::int64_t beam, std::int64_t max_length);
  std::int64_t start_id() const;
  std::int64_t end_id() const;
  std::int64_t max_output_length() const;

 private:
  torch::jit::Module module_;
};

/// A per-token tagger (tasks/span_tagging.h): ids as a text classifier reads them (with subwords
/// [B, T, 1 + G]).
class SpanTagger {
 public:
  explicit SpanTagger(torch::jit::Module module) : module_(std::move(module)) {}
  /// Each token's logit of being marked [B, T].
  torch::Tensor logits(const torch::Tensor& ids);
  /// Each token's probability of being marked, sigmoid(logits) [B, T].
  torch::Tensor forward(const torch::Tensor& ids);
  /// What training's loss reads: each member's logits for an ensemble (models/ensemble.h), else {logits(ids)}.
  std::vector<torch::Tensor> member_logits(const torch::Tensor& ids);
  /// Whether its tags are a linear-chain CRF's (trained by member_crf_nll), else independent per token
  /// (trained on member_logits).
  bool is_crf() const;
  /// Each member's -log p(tags | text) of each text [B] (targets [B, T]: 1 at marked tokens), with
  /// its tokens' log-odds as logits() gives them [B, T] (their marginals, with gradients), from one pass.
  std::vector<std::pair<torch::Tensor, torch::Tensor>> member_crf_loss(const torch::Tensor& ids, const torch::Tensor& targets);

 private:
  torch::jit::Module module_;
};

}  // namespace attn::models
