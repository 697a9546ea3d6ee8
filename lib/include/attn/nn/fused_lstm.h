#pragma once
/// attn's own CPU kernel for the bidirectional LSTM that BiLSTM.forward_masked runs (recurrent.h),
/// forward and backward, for training and scoring in C++. LibTorch's torch.lstm runs a chain of
/// small operators per step and direction and records each for autograd, and its backward replays
/// them one by one; on two cores that made the LSTM most of an epoch. This kernel:
///   - packs each direction's real steps time-major (a row's steps in order for the forward
///     direction, reversed for the backward one; rows sorted by length), so no padding is computed;
///   - computes the input projection of every step in one matrix product, once per distinct input
///     row when many repeat (a text's repeated words; the versions of a text that erasures and
///     integrated gradients score together), then per step one product with the recurrent weights
///     and one fused pass for the gates (i, f, g, o as torch.nn.LSTM orders them): c = f c' + i g,
///     h = o tanh(c);
///   - in the backward pass, computes per step the gates' gradients in one fused pass and the
///     state's in one product, then every weight gradient in one product each;
///   - runs the two directions at once, one thread each, when two or more threads are allowed.
/// Its results equal torch.lstm's to float rounding (tests: outputs and every gradient within 1e-5).
/// The TorchScript files attn saves keep torch.lstm, so that Python loads them unchanged.
#include <torch/types.h>

namespace attn::nn {

/// One direction's parameters, as torch.nn.LSTM names them: weight_ih [4H, I], weight_hh [4H, H],
/// bias_ih [4H], bias_hh [4H].
struct LstmWeights {
  torch::Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};

/// x [B, T, I] float32, mask [B, T] (nonzero: a real step; real steps may sit anywhere in a row)
/// -> [B, T, 2H]: at each real step the forward direction's state after reading the row's real
/// steps up to it, then the backward direction's after reading them from the row's end back to it;
/// zeros at padded steps. Both directions start from zero states. Differentiable (torch::autograd)
/// in x and the eight weight tensors.
torch::Tensor bilstm_masked(const torch::Tensor& x, const torch::Tensor& mask, const LstmWeights& forward, const LstmWeights& backward);

/// Registers the TorchScript operator attn::bilstm_masked(x, mask, w_ih, w_hh, b_ih, b_hh,
/// w_ih_reverse, w_hh_reverse, b_ih_reverse, b_hh_reverse) -> Tensor, called `attn.bilstm_masked`
/// in attn's TorchScript source (once; any thread).
void register_fused_lstm();

}  // namespace attn::nn
