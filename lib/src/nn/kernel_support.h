#pragma once
// What attn's autograd kernels (fused_lstm.cpp, fused_attention.cpp) share: running two halves of
// the work at once, and backward passes that use up what their forward pass saved. Internal to lib/.
#include <ATen/Parallel.h>
#include <torch/torch.h>

namespace attn::nn {

/// Runs f(0) and f(1), at once on two threads when LibTorch may use two or more (each with its own
/// single-threaded BLAS). The work is plain arithmetic on tensors that autograd must not record
/// (the kernel is its own autograd function), on every thread (the gradient mode is a thread's own).
template <class F>
void on_two_threads(const F& f) {
  at::parallel_for(0, 2, 1, [&](std::int64_t begin, std::int64_t end) {
    torch::NoGradGuard no_grad;
    for (std::int64_t i = begin; i < end; ++i) f(static_cast<int>(i));
  });
}

/// Marks what `ctx` saved as used up by this backward pass; a second backward pass through the
/// same forward pass (retain_graph) throws, naming `op`, instead of computing from overwritten values.
inline void use_saved_once(torch::autograd::AutogradContext* ctx, const char* op) {
  TORCH_CHECK(ctx->saved_data.count("used") == 0, op,
              ": a second backward pass through the same forward pass (retain_graph) is not supported: "
              "its backward pass uses up what the forward pass saved");
  ctx->saved_data["used"] = true;
}

}  // namespace attn::nn
