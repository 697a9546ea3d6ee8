#pragma once
/// The Transformer's building blocks (Vaswani et al. 2017; seed 003): sinusoidal positional
/// encoding, and the encoder and decoder layers built on MultiHeadAttention. Batch-first; masks as
/// in attention.h (true = may be attended). Sources in lib/src/nn/transformer.cpp.
#include <tuple>

#include <torch/arg.h>

#include "attn/nn/attention.h"

namespace attn::nn {

/// PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)), added to the
/// input. Buffer: pe [max_length, D] (not trained).
class PositionalEncoding : public ScriptModule {
 public:
  PositionalEncoding(std::int64_t dim, std::int64_t max_length = 5000);
  explicit PositionalEncoding(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// x [B, T, D] -> x + PE[:T]
  Tensor forward(const Tensor& x) const { return call({x}).toTensor(); }
};

struct TransformerLayerOptions {
  TransformerLayerOptions(std::int64_t d_model, std::int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TORCH_ARG(std::int64_t, d_model);
  TORCH_ARG(std::int64_t, nhead);
  /// Hidden size of the position-wise feed-forward network.
  TORCH_ARG(std::int64_t, dim_feedforward) = 2048;
  /// Dropout on attention weights, after each sublayer, and inside the feed-forward network.
  TORCH_ARG(double, dropout) = 0.1;
  /// false (the paper, and PyTorch's default): x = LayerNorm(x + Sublayer(x));
  /// true (pre-norm): x = x + Sublayer(LayerNorm(x)).
  TORCH_ARG(bool, norm_first) = false;
  TORCH_ARG(double, layer_norm_eps) = 1e-5;
};

/// Encoder layer: self-attention and a ReLU feed-forward network, each with a residual
/// connection and layer norm. Parameters: self_attn.*, linear1, linear2, norm1, norm2.
class TransformerEncoderLayer : public ScriptModule {
 public:
  explicit TransformerEncoderLayer(const TransformerLayerOptions& options);
  explicit TransformerEncoderLayer(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// x [B, T, E], mask [B, T] -> (y [B, T, E], self-attention weights [B, heads, T, T]).
  std::tuple<Tensor, Tensor> forward(const Tensor& x, const OptionalTensor& mask = {}) const { return pair(call({x, ivalue(mask)})); }
};

/// Decoder layer: causal self-attention, encoder-decoder attention over the memory, and a
/// feed-forward network, each with residual + layer norm. Parameters: self_attn.*, cross_attn.*,
/// linear1, linear2, norm1, norm2, norm3.
class TransformerDecoderLayer : public ScriptModule {
 public:
  explicit TransformerDecoderLayer(const TransformerLayerOptions& options);
  explicit TransformerDecoderLayer(torch::jit::Module loaded) : ScriptModule(std::move(loaded)) {}
  /// x [B, T, E] (target so far), memory [B, S, E] (encoder output), x_mask [B, T],
  /// memory_mask [B, S] -> (y [B, T, E], self weights [B, heads, T, T], cross weights [B, heads, T, S]).
  std::tuple<Tensor, Tensor, Tensor> forward(const Tensor& x, const Tensor& memory, const OptionalTensor& x_mask = {},
                                             const OptionalTensor& memory_mask = {}) const;
};

namespace script {
torch::jit::Module positional_encoding(std::int64_t dim, std::int64_t max_length);
torch::jit::Module transformer_encoder_layer(const TransformerLayerOptions& options);
torch::jit::Module transformer_decoder_layer(const TransformerLayerOptions& options);
}  // namespace script

}  // namespace attn::nn
