// attn's CPU kernel for a scaled embedding lookup (see fused_embedding.h): the passes, the autograd
// function and the TorchScript operator.
#include "attn/nn/fused_embedding.h"

#include <cstring>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "vector_math.h"

namespace attn::nn {
namespace {

using torch::Tensor;

/// out[n] = weight[ids[n]] * scale for the T rows n of one batch row, channels [c0, c1) of C.
ATTN_VECTOR_CLONES
void lookup_row(const float* __restrict weight, const std::int64_t* __restrict ids, const float* __restrict scale, float* __restrict out,
                std::int64_t T, std::int64_t C, std::int64_t c0, std::int64_t c1) {
  for (std::int64_t t = 0; t < T; ++t) {
    const float* __restrict w = weight + ids[t] * C;
    float* __restrict o = out + t * C;
    for (std::int64_t c = c0; c < c1; ++c) o[c] = w[c] * scale[c];
  }
}

/// grad[ids[n]] += g[n] * scale for the T rows n of one batch row, channels [c0, c1) of C.
ATTN_VECTOR_CLONES
void accumulate_row(const float* __restrict g, const std::int64_t* __restrict ids, const float* __restrict scale, float* __restrict grad,
                    std::int64_t T, std::int64_t C, std::int64_t c0, std::int64_t c1) {
  for (std::int64_t t = 0; t < T; ++t) {
    float* __restrict w = grad + ids[t] * C;
    const float* __restrict gt = g + t * C;
    for (std::int64_t c = c0; c < c1; ++c) w[c] += gt[c] * scale[c];
  }
}

/// Channels per task: the backward pass's threads own whole channel ranges of the gradient (no
/// two write the same value), and each adds the tokens in order, so the result is the same on any
/// thread count.
constexpr std::int64_t kChannelsPerTask = 16;

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class EmbeddingScaledFunction : public torch::autograd::Function<EmbeddingScaledFunction> {
 public:
  static Tensor forward(AutogradContext* ctx, const Tensor& weight_in, const Tensor& ids_in, const Tensor& scale_in) {
    TORCH_CHECK(weight_in.dim() == 2 && weight_in.scalar_type() == torch::kFloat32 && weight_in.device().is_cpu(),
                "embedding_scaled: weight must be a float32 CPU tensor [V, C]");
    TORCH_CHECK(ids_in.dim() == 2 && ids_in.scalar_type() == torch::kInt64, "embedding_scaled: ids must be int64 [B, T]");
    const std::int64_t V = weight_in.size(0), C = weight_in.size(1), B = ids_in.size(0), T = ids_in.size(1);
    TORCH_CHECK(scale_in.scalar_type() == torch::kFloat32 && scale_in.dim() == 3 && scale_in.size(0) == B && scale_in.size(1) == 1 &&
                    scale_in.size(2) == C,
                "embedding_scaled: scale must be float32 [B, 1, C] for ids [B, T] and weight [V, C]");
    TORCH_CHECK(!scale_in.requires_grad(), "embedding_scaled: scale is a constant (a dropout mask); it has no gradient");
    const Tensor ids = ids_in.contiguous(), weight = weight_in.contiguous(), scale = scale_in.contiguous();
    if (ids.numel() > 0) {
      const auto [lowest, highest] = torch::aminmax(ids);
      TORCH_CHECK(lowest.item<std::int64_t>() >= 0 && highest.item<std::int64_t>() < V, "embedding_scaled: ids out of range [0, ", V, ")");
    }
    Tensor out = torch::empty({B, T, C}, weight.options());
    const float* wp = weight.data_ptr<float>();
    const std::int64_t* ip = ids.data_ptr<std::int64_t>();
    const float* sp = scale.data_ptr<float>();
    float* op = out.data_ptr<float>();
    at::parallel_for(0, B, 16, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t b = begin; b < end; ++b) lookup_row(wp, ip + b * T, sp + b * C, op + b * T * C, T, C, 0, C);
    });
    ctx->save_for_backward({ids, scale});
    ctx->saved_data["rows"] = V;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &ids = saved[0], &scale = saved[1];
    const std::int64_t V = ctx->saved_data["rows"].toInt(), B = ids.size(0), T = ids.size(1), C = scale.size(2);
    const Tensor g = grad_outputs[0].contiguous();
    Tensor grad = torch::zeros({V, C}, g.options());
    const std::int64_t* ip = ids.data_ptr<std::int64_t>();
    const float* sp = scale.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    float* out = grad.data_ptr<float>();
    at::parallel_for(0, (C + kChannelsPerTask - 1) / kChannelsPerTask, 1, [&](std::int64_t begin, std::int64_t end) {
      const std::int64_t c0 = begin * kChannelsPerTask, c1 = std::min(C, end * kChannelsPerTask);
      for (std::int64_t b = 0; b < B; ++b) accumulate_row(gp + b * T * C, ip + b * T, sp + b * C, out, T, C, c0, c1);
    });
    return {grad, Tensor(), Tensor()};
  }
};

}  // namespace

Tensor embedding_scaled(const Tensor& weight, const Tensor& ids, const Tensor& scale) {
  return EmbeddingScaledFunction::apply(weight, ids, scale);
}

void register_fused_embedding() {
  static const auto registered =
      torch::RegisterOperators().op("attn::embedding_scaled(Tensor weight, Tensor ids, Tensor scale) -> Tensor", &embedding_scaled);
  (void)registered;
}

}  // namespace attn::nn
