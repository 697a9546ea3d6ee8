#pragma once
/// attn's own CPU kernel for word attention (Yang et al.), the equations of attention.cpp's
/// WordAttention with combine: u_t = tanh(W h_t + b), score_t = v^T u_t + c, alpha = masked
/// softmax_t(score), s = sum_t alpha_t h_t; forward and backward, for training and scoring in C++.
/// As TorchScript ops, these equations are a chain of operators, each a pass over [B, T, D] with a
/// result of its own (tanh, the weighted h, and in the backward pass as many again); here one matrix
/// product computes W h_t + b for every step, then one pass per row of the batch does everything
/// else, and the backward pass likewise (one pass per row, then the products for dh and dW).
/// Its results equal the TorchScript ops' to float rounding (tests: within 1e-5, every gradient).
/// The TorchScript files attn saves keep the operators, so that Python loads them unchanged.
#include <tuple>

#include <torch/types.h>

namespace attn::nn {

/// h [B, T, D] float32; mask [B, T] (nonzero: a real step) or undefined (every step real);
/// weight [D, D], bias [D] (W, b); context_weight [1, D], context_bias [1] (v, c)
/// -> (s [B, D], alpha [B, T]). alpha is 0 at masked steps, and a row without a real step has
/// alpha 0 and s 0. Differentiable (torch::autograd) in h and the four parameters.
std::tuple<torch::Tensor, torch::Tensor> word_attention(const torch::Tensor& h, const torch::Tensor& mask, const torch::Tensor& weight,
                                                        const torch::Tensor& bias, const torch::Tensor& context_weight,
                                                        const torch::Tensor& context_bias);

/// Registers the TorchScript operator attn::word_attention(h, mask?, weight, bias, context_weight,
/// context_bias) -> (Tensor, Tensor), called `attn.word_attention` in attn's TorchScript source
/// (once; any thread).
void register_fused_attention();

}  // namespace attn::nn
