#pragma once
/// The attention mechanisms of the seed documents, each faithful to its paper. Every one is a
/// TorchScript module (see script_module.h) whose source, in lib/src/nn/attention.cpp, spells out
/// the paper's equations; the classes here are typed C++ handles.
///
/// Conventions, for every module:
///   - tensors are batch-first: [B, T, D];
///   - a mask is optional; mask[b, t] is true (or 1) where position t may be attended, false for
///     padding. Masked positions get exactly zero weight, the weights of a row sum to 1 over its
///     unmasked positions, and a fully masked row gets all-zero weights (never NaN);
///   - forward returns (output, weights).
#include <string>
#include <string_view>
#include <tuple>

#include <torch/arg.h>

#include "attn/nn/script_module.h"

namespace attn::nn {

// ---------------------------------------------------------------------------------------------
struct WordAttentionOptions {
  explicit WordAttentionOptions(std::int64_t dim) : dim_(dim) {}
  /// Size D of each h_t (120 for the seed's BiLSTM of 2 x 60).
  TORCH_ARG(std::int64_t, dim);
  /// true: return s = sum_t alpha_t h_t [B, D]; false: the weighted sequence alpha_t h_t [B, T, D]
  /// (the seed's combine=False).
  TORCH_ARG(bool, combine) = true;
  /// kNative with combine: the same equations on attn's kernel (fused_attention.h), for training
  /// and scoring in C++; otherwise the TorchScript operators below.
  TORCH_ARG(Runtime, runtime) = Runtime::kPortable;
};

/// Word attention pooling (Yang et al. 2016, "Hierarchical Attention Networks"; seed 000):
///   u_t = tanh(W h_t + b),  alpha = softmax_t(v^T u_t),  s = sum_t alpha_t h_t.
/// Parameters: mlp.weight [D, D], mlp.bias [D], context.weight [1, D], context.bias [1].
class WordAttention : public ScriptModule {
 public:
  explicit WordAttention(const WordAttentionOptions& options);
  /// Wraps a module loaded with torch::jit::load.
  explicit WordAttention(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// h [B, T, D], mask [B, T] -> (s [B, D] or [B, T, D], alpha [B, T]).
  std::tuple<Tensor, Tensor> forward(const Tensor& h, const OptionalTensor& mask = {}) const { return pair(call({h, ivalue(mask)})); }
};

// ---------------------------------------------------------------------------------------------
/// Feature attention (seed 001): alpha = softmax(W x + b) over the D input features, output
/// alpha * x (element-wise). Parameters: attention.weight [D, D], attention.bias [D].
class FeatureAttention : public ScriptModule {
 public:
  explicit FeatureAttention(std::int64_t features);
  explicit FeatureAttention(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// x [B, D], mask [B, D] -> (alpha * x [B, D], alpha [B, D]).
  std::tuple<Tensor, Tensor> forward(const Tensor& x, const OptionalTensor& mask = {}) const { return pair(call({x, ivalue(mask)})); }
};

// ---------------------------------------------------------------------------------------------
/// The alignment score functions of seed 002's table (Lilian Weng's summary) and seed 003.
enum class Score {
  kAdditive,   ///< "additive": v^T tanh(W q + U k)          (Bahdanau et al. 2015, "concat")
  kGeneral,    ///< "general": q^T W k                        (Luong et al. 2015)
  kDot,        ///< "dot": q^T k                              (Luong et al. 2015)
  kScaledDot,  ///< "scaled-dot": q^T k / sqrt(d)             (Vaswani et al. 2017)
  kCosine,     ///< "cosine": cos(q, k), content-based        (Graves et al. 2014)
  kLocation,   ///< "location": softmax(W q) over positions   (Luong et al. 2015)
};
/// Parses a score name; an unknown name throws std::invalid_argument listing the valid ones.
Score parse_score(std::string_view name);
const char* score_name(Score score);

struct QueryKeyAttentionOptions {
  QueryKeyAttentionOptions(std::int64_t query_dim, std::int64_t key_dim) : query_dim_(query_dim), key_dim_(key_dim) {}
  /// Size of the query (the decoder state s_t).
  TORCH_ARG(std::int64_t, query_dim);
  /// Size of each key (encoder state h_i); the keys are also the values.
  TORCH_ARG(std::int64_t, key_dim);
  TORCH_ARG(Score, score) = Score::kAdditive;
  /// additive: size of the hidden layer (0: key_dim).
  TORCH_ARG(std::int64_t, attention_dim) = 0;
  /// location: the longest key sequence (W maps the query to this many positions).
  TORCH_ARG(std::int64_t, max_length) = 0;
};

/// Attention of a query over keys with a selectable score: alpha = softmax_i(score(q, k_i)),
/// context c = sum_i alpha_i k_i. dot and scaled-dot need query_dim == key_dim.
/// Parameters by score: additive query_proj.weight [A, Dq], key_proj.weight [A, Dk],
/// v.weight [1, A]; general W.weight [Dq, Dk]; location location.weight [max_length, Dq].
class QueryKeyAttention : public ScriptModule {
 public:
  explicit QueryKeyAttention(const QueryKeyAttentionOptions& options);
  explicit QueryKeyAttention(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// query [B, Dq] (one step) or [B, Tq, Dq] (all steps); keys [B, Tk, Dk]; mask [B, Tk]
  /// -> (context [B, Dk] or [B, Tq, Dk], alpha [B, Tk] or [B, Tq, Tk]).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& keys, const OptionalTensor& mask = {}) const {
    return pair(call({query, keys, ivalue(mask)}));
  }
};

// ---------------------------------------------------------------------------------------------
/// Luong et al. (2015)'s attentional hidden state: h~ = tanh(W_c [c; q]).
/// Parameters: combine.weight [out, Dc + Dq].
class LuongOutput : public ScriptModule {
 public:
  LuongOutput(std::int64_t context_dim, std::int64_t query_dim, std::int64_t out_dim);
  explicit LuongOutput(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// context [.., Dc], query [.., Dq] -> h~ [.., out].
  Tensor forward(const Tensor& context, const Tensor& query) const { return call({context, query}).toTensor(); }
};

// ---------------------------------------------------------------------------------------------
/// Scaled dot-product attention (Vaswani et al. 2017): softmax(Q K^T / sqrt(d_k)) V, with
/// dropout on the weights in training mode. No parameters.
class ScaledDotProductAttention : public ScriptModule {
 public:
  explicit ScaledDotProductAttention(double dropout = 0.0);
  explicit ScaledDotProductAttention(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// q [.., Tq, d], k [.., Tk, d], v [.., Tk, dv], mask broadcastable to [.., Tq, Tk]
  /// -> (out [.., Tq, dv], weights [.., Tq, Tk]).
  std::tuple<Tensor, Tensor> forward(const Tensor& q, const Tensor& k, const Tensor& v, const OptionalTensor& mask = {}) const {
    return pair(call({q, k, v, ivalue(mask)}));
  }
};

struct MultiHeadAttentionOptions {
  MultiHeadAttentionOptions(std::int64_t embed_dim, std::int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  /// Model size E; must be divisible by num_heads.
  TORCH_ARG(std::int64_t, embed_dim);
  TORCH_ARG(std::int64_t, num_heads);
  /// Dropout on the attention weights (training mode only).
  TORCH_ARG(double, dropout) = 0.0;
};

/// Multi-head attention (Vaswani et al. 2017): head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V),
/// MultiHead = Concat(head_1..head_h) W^O. Parameters: q_proj, k_proj, v_proj, out_proj
/// (.weight [E, E], .bias [E]).
class MultiHeadAttention : public ScriptModule {
 public:
  explicit MultiHeadAttention(const MultiHeadAttentionOptions& options);
  explicit MultiHeadAttention(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// query [B, Tq, E], key and value [B, Tk, E]; key_mask [B, Tk]; causal: query i attends to keys
  /// j <= i only -> (out [B, Tq, E], weights [B, heads, Tq, Tk]).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value, const OptionalTensor& key_mask = {},
                                     bool causal = false) const {
    return pair(call({query, key, value, ivalue(key_mask), causal}));
  }
};

namespace script {
/// The TorchScript modules behind the classes above, to compose into bigger modules.
torch::jit::Module scaled_dot_product_attention(double dropout);
torch::jit::Module multi_head_attention(const MultiHeadAttentionOptions& options);
}  // namespace script

}  // namespace attn::nn
