// attn's CPU kernel for word attention (see fused_attention.h; the equations as TorchScript are
// WordAttention's in attention.cpp): a row's passes forward and backward, the autograd function and
// the TorchScript operator.
#include "attn/nn/fused_attention.h"
#include "attn/nn/repeatable_backward.h"

#include <cmath>
#include <limits>

#include <ATen/Parallel.h>
#include <torch/script.h>

#include "kernel_support.h"
#include "vector_math.h"

namespace attn::nn {
namespace {

using torch::Tensor;
using vector_math::tanh_approx;

/// sum_k a[k] b[k] in sixteen running sums (vectorised; the same order whatever the thread count).
__attribute__((always_inline)) inline float dot(const float* __restrict a, const float* __restrict b, std::int64_t n) {
  float acc[16] = {};
  std::int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    for (int l = 0; l < 16; ++l) acc[l] += a[k + l] * b[k + l];
  float sum = 0.0f;
  for (; k < n; ++k) sum += a[k] * b[k];
  for (int l = 0; l < 16; ++l) sum += acc[l];
  return sum;
}

/// One row of the batch, forward. u [T, D] holds W h_t + b and gets u_t = tanh(W h_t + b) at the
/// real steps (real [T], null: every step); h [T, D]; v [D], c: the context vector and its bias.
/// Writes alpha [T] (0 at padding; all 0 without a real step) and s [D] = sum_t alpha_t h_t.
ATTN_VECTOR_CLONES
void forward_row(float* __restrict u, const float* __restrict h, const std::uint8_t* real, const float* __restrict v, float c,
                 float* __restrict alpha, float* __restrict s, std::int64_t T, std::int64_t D) {
  float top = -std::numeric_limits<float>::infinity();
  bool any = false;
  for (std::int64_t t = 0; t < T; ++t) {
    if (real && !real[t]) continue;
    float* __restrict ut = u + t * D;
    for (std::int64_t k = 0; k < D; ++k) ut[k] = tanh_approx(ut[k]);
    alpha[t] = dot(ut, v, D) + c;  // the score v^T u_t + c, for now
    top = std::max(top, alpha[t]);
    any = true;
  }
  for (std::int64_t k = 0; k < D; ++k) s[k] = 0.0f;
  if (!any) {
    for (std::int64_t t = 0; t < T; ++t) alpha[t] = 0.0f;
    return;
  }
  float total = 0.0f;  // softmax over the real steps: exp(score - max) / sum
  for (std::int64_t t = 0; t < T; ++t) {
    alpha[t] = real && !real[t] ? 0.0f : std::exp(alpha[t] - top);
    total += alpha[t];
  }
  for (std::int64_t t = 0; t < T; ++t) {
    alpha[t] /= total;
    if (alpha[t] == 0.0f) continue;
    const float a = alpha[t];
    const float* __restrict ht = h + t * D;
    for (std::int64_t k = 0; k < D; ++k) s[k] += a * ht[k];
  }
}

/// One row of the batch, backward, from gs [D] and ga [T] (null: none), the gradients of s and
/// alpha. With da_t = gs . h_t + ga_t, the score's gradient is ds_t = alpha_t (da_t - sum_t' alpha_t' da_t').
/// uz [T, D] holds u and gets dz = ds_t v (1 - u_t^2) in its place (the gradient of W h_t + b;
/// zeros at padding; each u is read just before: the forward pass's u is used up). Writes dh [T, D] =
/// alpha_t gs (h's gradient through the weighted sum; the product dz W is added later), and the row's
/// shares of the parameters' gradients: db [D] = sum_t dz_t, dv [D] = sum_t ds_t u_t, *dc = sum_t ds_t.
ATTN_VECTOR_CLONES
void backward_row(float* __restrict uz, const float* __restrict h, const std::uint8_t* real, const float* __restrict v,
                  const float* __restrict alpha, const float* __restrict gs, const float* ga, float* __restrict ds, float* __restrict dh,
                  float* __restrict db, float* __restrict dv, float* dc, std::int64_t T, std::int64_t D) {
  float expected = 0.0f;  // sum_t alpha_t da_t
  for (std::int64_t t = 0; t < T; ++t) {
    ds[t] = real && !real[t] ? 0.0f : dot(gs, h + t * D, D) + (ga ? ga[t] : 0.0f);
    expected += alpha[t] * ds[t];
  }
  for (std::int64_t k = 0; k < D; ++k) db[k] = dv[k] = 0.0f;
  float dc_sum = 0.0f;
  for (std::int64_t t = 0; t < T; ++t) {
    float* __restrict zt = uz + t * D;  // u_t, then dz_t
    float* __restrict dht = dh + t * D;
    if (real && !real[t]) {
      for (std::int64_t k = 0; k < D; ++k) zt[k] = dht[k] = 0.0f;
      continue;
    }
    const float a = alpha[t], d = a * (ds[t] - expected);
    dc_sum += d;
    for (std::int64_t k = 0; k < D; ++k) {
      const float u = zt[k], dz = d * v[k] * (1.0f - u * u);
      zt[k] = dz;
      dht[k] = a * gs[k];
      db[k] += dz;
      dv[k] += d * u;
    }
  }
  *dc = dc_sum;
}

/// out[k] = sum_r rows[r * n + k] over `count` rows, in row order (the same bits on any thread count).
ATTN_VECTOR_CLONES
void sum_rows(const float* __restrict rows, std::int64_t count, std::int64_t n, float* __restrict out) {
  for (std::int64_t k = 0; k < n; ++k) out[k] = 0.0f;
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t k = 0; k < n; ++k) out[k] += rows[r * n + k];
}

/// Runs f(half, begin, end) for the two halves of the batch's rows [0, B), at once when LibTorch may
/// use two threads, each half's products on its own thread's BLAS. The products are narrow (D = 120
/// for the seed): BLAS's own threads made dW = dz^T h only 1.07x faster on two cores, where two
/// halves, one a core, are 2x. The halves do not depend on the thread count, nor do the results.
template <class F>
void on_two_halves(std::int64_t B, const F& f) {
  on_two_threads([&](int half) { f(half, half == 0 ? 0 : B / 2, half == 0 ? B / 2 : B); });
}

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class WordAttentionFunction : public torch::autograd::Function<WordAttentionFunction> {
 public:
  static tensor_list forward(AutogradContext* ctx, const Tensor& h_in, const c10::optional<Tensor>& mask_in, const Tensor& weight,
                             const Tensor& bias, const Tensor& context_weight, const Tensor& context_bias) {
    TORCH_CHECK(h_in.dim() == 3 && h_in.scalar_type() == torch::kFloat32 && h_in.device().is_cpu(),
                "word_attention: h must be a float32 CPU tensor [B, T, D]");
    const std::int64_t B = h_in.size(0), T = h_in.size(1), D = h_in.size(2);
    const Tensor mask = mask_in ? *mask_in : Tensor();
    TORCH_CHECK(!mask.defined() || (mask.dim() == 2 && mask.size(0) == B && mask.size(1) == T),
                "word_attention: mask must be [B, T] like h");
    TORCH_CHECK(weight.dim() == 2 && weight.size(0) == D && weight.size(1) == D && bias.numel() == D && context_weight.numel() == D &&
                    context_bias.numel() == 1,
                "word_attention: parameters of another size than h's D = ", D);
    for (const Tensor* p : {&weight, &bias, &context_weight, &context_bias})
      TORCH_CHECK(p->scalar_type() == torch::kFloat32, "word_attention: float32 parameters only");
    const Tensor h = h_in.contiguous();
    const Tensor real = mask.defined() ? (mask != 0).to(torch::kUInt8).contiguous() : Tensor();
    const Tensor h_rows = h.view({B * T, D}), u = torch::empty({B * T, D}, h.options());
    const Tensor v = context_weight.contiguous().view({D});
    const float c = context_bias.item<float>();
    Tensor s = torch::empty({B, D}, h.options()), alpha = torch::empty({B, T}, h.options());
    float* up = u.data_ptr<float>();
    const float* hp = h.data_ptr<float>();
    const std::uint8_t* rp = real.defined() ? real.data_ptr<std::uint8_t>() : nullptr;
    float* ap = alpha.data_ptr<float>();
    float* sp = s.data_ptr<float>();
    on_two_halves(B, [&](std::int64_t, std::int64_t begin, std::int64_t end) {
      Tensor u_half = u.narrow(0, begin * T, (end - begin) * T);
      torch::addmm_out(u_half, bias, h_rows.narrow(0, begin * T, (end - begin) * T), weight.t());  // W h_t + b, every step at once
      for (std::int64_t b = begin; b < end; ++b)
        forward_row(up + b * T * D, hp + b * T * D, rp ? rp + b * T : nullptr, v.data_ptr<float>(), c, ap + b * T, sp + b * D, T, D);
    });
    ctx->save_for_backward({h, u, alpha, weight, v});
    ctx->saved_data["real"] = real;  // undefined: every step real
    ctx->saved_data["repeatable"] = RepeatableBackward::active();
    ctx->saved_data["weight_edge"] =
        static_cast<std::int64_t>(real.defined() ? 2 : 1);  // autograd's inputs: h, the mask if given, weight, ...
    return {s, alpha};
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    // The backward pass overwrites the saved u with dz: it can run once, unless the forward pass ran
    // under RepeatableBackward.
    const bool repeatable = ctx->saved_data["repeatable"].toBool();
    if (!repeatable) use_saved_once(ctx, "word_attention");
    const Tensor &h = saved[0], &u = saved[1], &alpha = saved[2], &weight = saved[3], &v = saved[4];
    const Tensor real = ctx->saved_data["real"].toTensor();
    const std::int64_t B = h.size(0), T = h.size(1), D = h.size(2);
    const Tensor gs = grad_outputs[0].defined() ? grad_outputs[0].contiguous() : torch::zeros({B, D}, h.options());
    const Tensor ga = grad_outputs[1].defined() ? grad_outputs[1].contiguous() : Tensor();
    const Tensor ds = torch::empty({B * T}, h.options());
    const Tensor dz = repeatable ? u.clone() : u;  // the gradient of W h_t + b takes u's place
    const Tensor dh = torch::empty({B * T, D}, h.options());
    const Tensor shares = torch::empty({B, 2 * D + 1}, h.options());  // each row's db, dv and dc
    const std::uint8_t* rp = real.defined() ? real.data_ptr<std::uint8_t>() : nullptr;
    // Without the parameters' gradients (constants: an importance method's input gradients), only dh.
    const bool parameters = ctx->needs_input_grad({{static_cast<std::size_t>(ctx->saved_data["weight_edge"].toInt()),
                                                    static_cast<std::size_t>(ctx->saved_data["weight_edge"].toInt()) + 4}});
    const Tensor h_rows = h.view({B * T, D}), d_weight_halves = torch::empty({2, D, D}, h.options());
    on_two_halves(B, [&](std::int64_t half, std::int64_t begin, std::int64_t end) {
      for (std::int64_t b = begin; b < end; ++b) {
        float* share = shares.data_ptr<float>() + b * (2 * D + 1);
        backward_row(dz.data_ptr<float>() + b * T * D, h.data_ptr<float>() + b * T * D, rp ? rp + b * T : nullptr, v.data_ptr<float>(),
                     alpha.data_ptr<float>() + b * T, gs.data_ptr<float>() + b * D, ga.defined() ? ga.data_ptr<float>() + b * T : nullptr,
                     ds.data_ptr<float>() + b * T, dh.data_ptr<float>() + b * T * D, share, share + D, share + 2 * D, T, D);
      }
      const Tensor dz_half = dz.narrow(0, begin * T, (end - begin) * T);
      dh.narrow(0, begin * T, (end - begin) * T).addmm_(dz_half, weight);  // + the score's path: dz W
      if (!parameters) return;
      Tensor d_weight_half = d_weight_halves[half];
      torch::mm_out(d_weight_half, dz_half.t(), h_rows.narrow(0, begin * T, (end - begin) * T));  // sum_t dz_t h_t^T
    });
    if (!parameters) return {dh.view({B, T, D}), Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
    const Tensor d_weight = d_weight_halves[0] + d_weight_halves[1];
    const Tensor sums = torch::empty({2 * D + 1}, h.options());
    sum_rows(shares.data_ptr<float>(), B, 2 * D + 1, sums.data_ptr<float>());
    const Tensor d_bias = sums.narrow(0, 0, D), d_context = sums.narrow(0, D, D).view({1, D}), d_context_bias = sums.narrow(0, 2 * D, 1);
    return {dh.view({B, T, D}), Tensor(), d_weight, d_bias, d_context, d_context_bias};
  }
};

std::tuple<Tensor, Tensor> word_attention_op(const Tensor& h, const c10::optional<Tensor>& mask, const Tensor& weight, const Tensor& bias,
                                             const Tensor& context_weight, const Tensor& context_bias) {
  return word_attention(h, mask ? *mask : Tensor(), weight, bias, context_weight, context_bias);
}

}  // namespace

std::tuple<Tensor, Tensor> word_attention(const Tensor& h, const Tensor& mask, const Tensor& weight, const Tensor& bias,
                                          const Tensor& context_weight, const Tensor& context_bias) {
  const tensor_list out = WordAttentionFunction::apply(h, mask.defined() ? c10::optional<Tensor>(mask) : c10::nullopt, weight, bias,
                                                       context_weight, context_bias);
  return {out[0], out[1]};
}

void register_fused_attention() {
  static const auto registered = torch::RegisterOperators().op(
      "attn::word_attention(Tensor h, Tensor? mask, Tensor weight, Tensor bias, Tensor context_weight, Tensor context_bias) -> (Tensor, "
      "Tensor)",
      &word_attention_op);
  (void)registered;
}

}  // namespace attn::nn
