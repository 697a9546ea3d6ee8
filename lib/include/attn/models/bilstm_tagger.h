#pragma once
/// bilstm-tagger, the span tagger (SemEval-2021 Task 5, Toxic Spans): Embedding (words with their
/// character n-grams) -> SpatialDropout1D -> bidirectional LSTM -> Dense(1) per token. TorchScript
/// methods: forward(ids [B, T] int64, or [B, T, 1 + G] with subwords; 0 = padding) -> each token's
/// probability of being marked [B, T] (0 at padding); logits(ids) -> the logits [B, T] for training.
/// The LSTM reads only the real tokens, so a text's result does not depend on its padding or on the
/// rows batched with it.
#include "attn/models/registry.h"

namespace attn::models {

ModelEntry bilstm_tagger_entry();

}  // namespace attn::models
