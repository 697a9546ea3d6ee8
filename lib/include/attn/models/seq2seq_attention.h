#pragma once
/// seq2seq-attention, seeds 002 and 003: a character-level encoder-decoder with attention.
/// Encoder: character embedding -> bidirectional LSTM, states h_1..h_S (2 x units each).
/// Decoder: an LSTM cell of 2 x units whose initial state is tanh(W mean_i h_i); at each step it
/// attends over the encoder states (padding masked) with any score of the library, either
///   Bahdanau: c_t = attend(s_{t-1}, h); s_t = LSTM([y_{t-1}; c_t], s_{t-1}); logits = W_o [s_t; c_t]
///   Luong:    s_t = LSTM([y_{t-1}; h~_{t-1}], s_{t-1}); c_t = attend(s_t, h);
///             h~_t = tanh(W_c [c_t; s_t]); logits = W_o h~_t           (input feeding)
/// Target vocabulary: 0 padding, the target tokenizer's characters, then end (target_vocab - 2)
/// and start (target_vocab - 1).
/// TorchScript methods: logits(src [B, S], target_in [B, T]) -> (logits [B, T, V], attention
/// [B, T, S]) with teacher forcing; translate(src, max_length) -> (ids [B, T'] ending with the end
/// id, 0 after it; attention [B, T', S]) by greedy decoding; beam_search(src, beam, max_length) the
/// same by beam search with length normalisation; forward(src) = translate(src, max_output_length).
#include "attn/models/registry.h"

namespace attn::models {

ModelEntry seq2seq_attention_entry();

}  // namespace attn::models
