#pragma once
/// bilstm-attention, seed 000's toxic-comment model: Embedding -> SpatialDropout1D -> bidirectional
/// LSTM (input dropout, recurrent dropout) -> word attention (Yang et al.) -> Dense(labels) sigmoid.
/// TorchScript methods: forward(ids [B, T] int64, 0 = padding) -> (probabilities [B, labels],
/// attention [B, T]); logits(ids) -> (logits, attention) for training. The LSTM reads only the
/// real words (as Keras' mask_zero=True would) and padding is masked in the attention, so a text's
/// result does not depend on its padding or on the rows batched with it.
#include "attn/models/registry.h"

namespace attn::models {

ModelEntry bilstm_attention_entry();

}  // namespace attn::models
