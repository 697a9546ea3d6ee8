#pragma once
/// transformer-classifier (seed 003's Transformer, as a classifier for the same CSVs as
/// bilstm-attention): token embedding x sqrt(d_model) + sinusoidal position -> N encoder layers of
/// multi-head self-attention -> word-attention pooling (Yang et al.) -> Dense(labels) sigmoid.
/// Positions count from each text's first token, so pre-padding does not shift them.
/// TorchScript methods: forward(ids [B, T]) -> (probabilities [B, labels], pooling attention [B, T]);
/// logits(ids) for training; self_attention(ids) -> [layers] x [B, heads, T, T].
#include "attn/models/registry.h"

namespace attn::models {

ModelEntry transformer_classifier_entry();

}  // namespace attn::models
