#pragma once
/// The recurrent layers, as TorchScript modules (see script_module.h) with torch.nn's parameter
/// names and initialisation (U(-1/sqrt(H), 1/sqrt(H))).
#include "attn/nn/script_module.h"

namespace attn::nn::script {

/// Bidirectional one-layer LSTM, batch-first, on LibTorch's fused kernel. Parameters as
/// torch.nn.LSTM names them (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 and the *_reverse
/// ones). `recurrent_dropout` is DropConnect on the hidden-to-hidden weights while training (Merity
/// et al. 2017's weight drop), the fused kernel's stand-in for Keras' per-step recurrent dropout.
/// Methods:
///   forward(x [B, T, I]) -> [B, T, 2 * hidden]: every step, padding included;
///   forward_lengths(x, lengths [B]): post-padded rows of different lengths; each direction reads
///     only a row's real steps before its padding, so results do not depend on how a row was
///     batched (what pack_padded_sequence does, without its slow CPU path);
///   forward_masked(x, mask [B, T]): the same for padding anywhere (pre-padded rows included),
///     zeros at the padded steps.
/// `runtime` kNative runs forward_lengths and forward_masked on attn's fused kernel (fused_lstm.h;
/// forward_lengths then gives zeros at padded steps, where the portable build leaves what the LSTM
/// computed on the padding: callers read real steps only).
torch::jit::Module bilstm(std::int64_t input_size, std::int64_t hidden_size, double recurrent_dropout, Runtime runtime);

/// Bidirectional one-layer GRU, batch-first, on LibTorch's fused kernel (torch.gru), with
/// torch.nn.GRU's parameter names (weight_ih_l0 [3H, I], weight_hh_l0 [3H, H], bias_ih_l0,
/// bias_hh_l0 and the *_reverse ones) and initialisation. Methods:
///   forward(x [B, T, I]) -> [B, T, 2 * hidden]: every step, padding included;
///   forward_lengths(x, lengths [B]): post-padded rows of different lengths; each direction reads
///     only a row's real steps (what pack_padded_sequence does, on the fused kernel); zeros at the
///     padded steps, and a row of length 0 is all zeros.
/// `runtime` kNative runs forward_lengths on attn's kernel (fused_gru.h).
torch::jit::Module bigru(std::int64_t input_size, std::int64_t hidden_size, Runtime runtime);

/// LSTM cell parameters as torch.nn.LSTMCell names them (weight_ih [4H, I], weight_hh [4H, H],
/// bias_ih, bias_hh), for TorchScript that steps with torch.lstm_cell (a decoder).
torch::jit::Module lstm_cell(std::int64_t input_size, std::int64_t hidden_size);

}  // namespace attn::nn::script
