#pragma once
// For attn's kernels whose backward pass writes gradients over what their forward pass saved
// (fused_lstm.cpp, fused_attention.cpp). Internal to lib/.
#include <torch/torch.h>

namespace attn::nn {

/// Marks what `ctx` saved as used up by this backward pass; a second backward pass through the
/// same forward pass (retain_graph) throws, naming `op`, instead of computing from overwritten values.
inline void use_saved_once(torch::autograd::AutogradContext* ctx, const char* op) {
  TORCH_CHECK(ctx->saved_data.count("used") == 0, op,
              ": a second backward pass through the same forward pass (retain_graph) is not supported: "
              "its backward pass uses up what the forward pass saved");
  ctx->saved_data["used"] = true;
}

}  // namespace attn::nn
