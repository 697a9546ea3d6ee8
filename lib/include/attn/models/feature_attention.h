#pragma once
/// feature-attention, seed 001's model for tabular binary classification: alpha = softmax(W x + b)
/// over the D input features, the weighted input alpha (.) x, optional ReLU hidden layers, then
/// Dense(1) sigmoid. With D = 10 and no hidden layer it has the seed's 121 parameters.
/// TorchScript methods: forward(x [B, D] float) -> (probability [B, 1], attention [B, D]);
/// logits(x) -> (logit [B, 1], attention) for training.
#include "attn/models/registry.h"

namespace attn::models {

ModelEntry feature_attention_entry();

}  // namespace attn::models
