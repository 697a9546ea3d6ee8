// attn's CPU kernel for a scaled embedding lookup (see fused_embedding.h): the passes, the autograd
// function and the TorchScript operator.
#include "attn/nn/fused_embedding.h"

#include <cstring>

#include <ATen/Parallel.h>
#include <torch/script.h>

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

/// o += w over C channels.
ATTN_VECTOR_CLONES
void add_row(const float* __restrict w, float* __restrict o, std::int64_t C) {
  for (std::int64_t c = 0; c < C; ++c) o[c] += w[c];
}

/// o *= scale * inv over C channels.
ATTN_VECTOR_CLONES
void scale_row(float* __restrict o, const float* __restrict scale, float inv, std::int64_t C) {
  for (std::int64_t c = 0; c < C; ++c) o[c] *= scale[c] * inv;
}

/// grad[c] += g[c] * scale[c] * inv for channels [c0, c1).
ATTN_VECTOR_CLONES
void accumulate_scaled(const float* __restrict g, const float* __restrict scale, float inv, float* __restrict grad, std::int64_t c0,
                       std::int64_t c1) {
  for (std::int64_t c = c0; c < c1; ++c) grad[c] += g[c] * scale[c] * inv;
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

/// Rows of a token with subwords: its word row (or none) and its n-gram rows, and 1 / their count.
struct TokenRows {
  const std::int64_t* ids;  ///< [1 + G]: the word row (0 = none), then n-gram rows (0 = none)
  std::int64_t G;
  float inverse() const {
    std::int64_t n = 0;
    for (std::int64_t g = 0; g <= G; ++g) n += ids[g] != 0;
    return n > 0 ? 1.0f / static_cast<float>(n) : 0.0f;
  }
};

class SubwordEmbeddingScaledFunction : public torch::autograd::Function<SubwordEmbeddingScaledFunction> {
 public:
  static Tensor forward(AutogradContext* ctx, const Tensor& words_in, const Tensor& ngrams_in, const Tensor& ids_in,
                        const Tensor& scale_in) {
    TORCH_CHECK(words_in.dim() == 2 && ngrams_in.dim() == 2 && words_in.size(1) == ngrams_in.size(1) &&
                    words_in.scalar_type() == torch::kFloat32 && ngrams_in.scalar_type() == torch::kFloat32 && words_in.device().is_cpu() &&
                    ngrams_in.device().is_cpu(),
                "subword_embedding_scaled: words [V, C] and ngrams [N, C] must be float32 CPU tensors of one width");
    TORCH_CHECK(ids_in.dim() == 3 && ids_in.size(2) >= 1 && ids_in.scalar_type() == torch::kInt64,
                "subword_embedding_scaled: ids must be int64 [B, T, 1 + G]");
    const std::int64_t V = words_in.size(0), N = ngrams_in.size(0), C = words_in.size(1), B = ids_in.size(0), T = ids_in.size(1),
                       G = ids_in.size(2) - 1;
    TORCH_CHECK(scale_in.scalar_type() == torch::kFloat32 && scale_in.dim() == 3 && scale_in.size(0) == B && scale_in.size(1) == 1 &&
                    scale_in.size(2) == C && !scale_in.requires_grad(),
                "subword_embedding_scaled: scale must be a constant float32 [B, 1, C]");
    const Tensor ids = ids_in.contiguous(), words = words_in.contiguous(), ngrams = ngrams_in.contiguous(), scale = scale_in.contiguous();
    if (ids.numel() > 0) {
      const Tensor w = ids.select(2, 0), g = ids.narrow(2, 1, G);
      TORCH_CHECK(w.min().item<std::int64_t>() >= 0 && w.max().item<std::int64_t>() < V,
                  "subword_embedding_scaled: word rows out of range [0, ", V, ")");
      TORCH_CHECK(G == 0 || (g.min().item<std::int64_t>() >= 0 && g.max().item<std::int64_t>() < N),
                  "subword_embedding_scaled: n-gram rows out of range [0, ", N, ")");
    }
    Tensor out = torch::zeros({B, T, C}, words.options());
    const float *wp = words.data_ptr<float>(), *np = ngrams.data_ptr<float>(), *sp = scale.data_ptr<float>();
    const std::int64_t* ip = ids.data_ptr<std::int64_t>();
    float* op = out.data_ptr<float>();
    at::parallel_for(0, B * T, 64, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t n = begin; n < end; ++n) {
        const TokenRows token{ip + n * (G + 1), G};
        const float inv = token.inverse();
        if (inv == 0.0f) continue;  // padding
        float* o = op + n * C;
        if (token.ids[0] != 0) add_row(wp + token.ids[0] * C, o, C);
        for (std::int64_t g = 1; g <= G; ++g)
          if (token.ids[g] != 0) add_row(np + token.ids[g] * C, o, C);
        scale_row(o, sp + (n / T) * C, inv, C);
      }
    });
    ctx->save_for_backward({ids, scale});
    ctx->saved_data["words"] = V;
    ctx->saved_data["ngrams"] = N;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const Tensor &ids = saved[0], &scale = saved[1];
    const std::int64_t V = ctx->saved_data["words"].toInt(), N = ctx->saved_data["ngrams"].toInt(), B = ids.size(0), T = ids.size(1),
                       G = ids.size(2) - 1, C = scale.size(2);
    const Tensor g = grad_outputs[0].contiguous();
    Tensor gw = torch::zeros({V, C}, g.options()), gn = torch::zeros({N, C}, g.options());
    const std::int64_t* ip = ids.data_ptr<std::int64_t>();
    const float *sp = scale.data_ptr<float>(), *gp = g.data_ptr<float>();
    float *wp = gw.data_ptr<float>(), *np = gn.data_ptr<float>();
    // As embedding_scaled: each thread owns whole channel ranges, tokens added in order (the same
    // result on any thread count).
    at::parallel_for(0, (C + kChannelsPerTask - 1) / kChannelsPerTask, 1, [&](std::int64_t begin, std::int64_t end) {
      const std::int64_t c0 = begin * kChannelsPerTask, c1 = std::min(C, end * kChannelsPerTask);
      for (std::int64_t n = 0; n < B * T; ++n) {
        const TokenRows token{ip + n * (G + 1), G};
        const float inv = token.inverse();
        if (inv == 0.0f) continue;
        const float* gt = gp + n * C;
        const float* st = sp + (n / T) * C;
        if (token.ids[0] != 0) accumulate_scaled(gt, st, inv, wp + token.ids[0] * C, c0, c1);
        for (std::int64_t k = 1; k <= G; ++k)
          if (token.ids[k] != 0) accumulate_scaled(gt, st, inv, np + token.ids[k] * C, c0, c1);
      }
    });
    return {gw, gn, Tensor(), Tensor()};
  }
};

}  // namespace

Tensor embedding_scaled(const Tensor& weight, const Tensor& ids, const Tensor& scale) {
  return EmbeddingScaledFunction::apply(weight, ids, scale);
}

Tensor subword_embedding_scaled(const Tensor& words, const Tensor& ngrams, const Tensor& ids, const Tensor& scale) {
  return SubwordEmbeddingScaledFunction::apply(words, ngrams, ids, scale);
}

void register_fused_embedding() {
  static const auto registered =
      torch::RegisterOperators()
          .op("attn::embedding_scaled(Tensor weight, Tensor ids, Tensor scale) -> Tensor", &embedding_scaled)
          .op("attn::subword_embedding_scaled(Tensor words, Tensor ngrams, Tensor ids, Tensor scale) -> Tensor", &subword_embedding_scaled);
  (void)registered;
}

}  // namespace attn::nn
