#pragma once
/// attn's CPU kernel for the bidirectional GRU over rows of different lengths that BiGRU's
/// forward_lengths runs in native builds (recurrent.h), forward and backward. LibTorch's torch.gru
/// computes every padded step and records each step's small operators for autograd; this kernel:
///   - packs each direction's real steps time-major, rows sorted by length (the forward direction
///     reads a row's steps in order, the backward one reversed), so no padding is computed;
///   - computes both directions' input projections of every real step in one matrix product, once
///     per distinct input row when many repeat (a text's repeated words, the versions of a text
///     that erasures and integrated gradients score together);
///   - per step, one product with the recurrent weights on the rows still running, then the gates
///     (r, z, n as torch.nn.GRU orders them): r = s(W_ir x + b_ir + W_hr h + b_hr),
///     z = s(W_iz x + b_iz + W_hz h + b_hz), n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
///     h' = (1 - z) n + z h;
///   - in the backward pass, per step the gates' gradients and one product for the state's, then
///     each weight's gradient in one product over every step.
/// Its results equal torch.gru's to float rounding (tests: outputs and gradients). What it saves is
/// never overwritten, so a graph's backward pass may run more than once. The TorchScript files attn
/// saves keep torch.gru, so that Python loads them unchanged.
#include <torch/types.h>

namespace attn::nn {

/// One direction's parameters, as torch.nn.GRU names them: weight_ih [3H, I], weight_hh [3H, H],
/// bias_ih [3H], bias_hh [3H].
struct GruWeights {
  torch::Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};

/// x [B, T, I] float32, post-padded: row b is real on its first lengths[b] steps (int64, CPU)
/// -> [B, T, 2H]: the forward direction's state after each real step, then the backward direction's
/// after reading the row's real steps from its end back to it; zeros at padded steps. Both directions
/// start from zero states. Differentiable (torch::autograd) in x and the eight weight tensors.
torch::Tensor bigru_lengths(const torch::Tensor& x, const torch::Tensor& lengths, const GruWeights& forward, const GruWeights& backward);

/// Registers the TorchScript operator attn::bigru_lengths(x, lengths, w_ih, w_hh, b_ih, b_hh,
/// w_ih_reverse, w_hh_reverse, b_ih_reverse, b_hh_reverse) -> Tensor, called `attn.bigru_lengths`
/// in attn's TorchScript source (once; any thread).
void register_fused_gru();

}  // namespace attn::nn
