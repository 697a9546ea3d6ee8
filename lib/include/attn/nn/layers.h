#pragma once
/// Basic layers as TorchScript modules (see script_module.h), with PyTorch's parameter names and
/// initialisation, so saved weights read like torch.nn's in Python.
#include "attn/nn/script_module.h"

namespace attn::nn::script {

/// Linear layer y = x W^T + b: forward(x [..., in]) -> [..., out]. Parameters weight [out, in], bias [out];
/// U(-1/sqrt(in), 1/sqrt(in)) for both.
torch::jit::Module linear(std::int64_t in_features, std::int64_t out_features, bool bias = true);
/// Layer normalisation over the last dimension (weight 1, bias 0).
torch::jit::Module layer_norm(std::int64_t dim, double eps = 1e-5);

}  // namespace attn::nn::script
