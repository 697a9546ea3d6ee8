#pragma once
/// hierarchical-attention, Yang et al. 2016's Hierarchical Attention Network: Embedding -> BiGRU over
/// each sentence's words -> word attention -> BiGRU over the sentences -> sentence attention ->
/// Dense(labels) sigmoid. Its ids carry each word's sentence (text/sentences.h: word + 2^20 x
/// sentence, 0 = padding), so it is a text classifier like the others: forward(ids [B, T]) ->
/// (probabilities [B, labels], attention [B, T]) where a word's attention is its effective weight,
/// its sentence's alpha times its own alpha within the sentence; attention_levels(ids) -> (the word
/// weights within their sentences [B, T], each word's sentence weight [B, T]).
#include "attn/models/registry.h"

namespace attn::models {

ModelEntry hierarchical_attention_entry();

}  // namespace attn::models
