#pragma once
/// attn's own CPU kernel for an embedding lookup scaled per row and channel: the main job's
/// Embedding followed by its two dropout masks (SpatialDropout1D and the LSTM's input dropout, one
/// [B, 1, C] mask each), for training in C++. As TorchScript operators that is a lookup, a product
/// over [B, T, C], and in the backward pass a product and LibTorch's embedding backward (one thread);
/// here the lookup and the scaling are one pass, and the backward pass scales and accumulates in one
/// pass, its channels split between LibTorch's threads. Equal to torch.embedding(weight, ids) *
/// scale to float rounding (tests). The TorchScript files attn saves keep the operators.
#include <torch/types.h>

namespace attn::nn {

/// weight [V, C] float32, ids [B, T] int64 (each in [0, V)), scale [B, 1, C] float32, a constant
/// (no gradient) -> [B, T, C]: out[b, t] = weight[ids[b, t]] * scale[b, 0]. Differentiable
/// (torch::autograd) in weight, whose gradient is dense, as torch.embedding's.
torch::Tensor embedding_scaled(const torch::Tensor& weight, const torch::Tensor& ids, const torch::Tensor& scale);

/// The same for tokens with subwords (models/subword_embedding.h): words [V, C] and ngrams [N, C]
/// float32, ids [B, T, 1 + G] int64 (a word row, then n-gram rows; 0 = none), scale [B, 1, C] a
/// constant -> [B, T, C]: each token the mean of its rows, times scale[b, 0]; padding (all 0) gives 0.
/// Differentiable in words and ngrams (dense gradients). Equal to models' lookup(ids) * scale to
/// float rounding (tests).
torch::Tensor subword_embedding_scaled(const torch::Tensor& words, const torch::Tensor& ngrams, const torch::Tensor& ids,
                                       const torch::Tensor& scale);

/// Registers the TorchScript operators attn::embedding_scaled(weight, ids, scale) and
/// attn::subword_embedding_scaled(words, ngrams, ids, scale), called `attn.embedding_scaled` and
/// `attn.subword_embedding_scaled` in attn's TorchScript source (once; any thread).
void register_fused_embedding();

}  // namespace attn::nn
