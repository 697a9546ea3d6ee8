// attn's CPU kernel for the bidirectional GRU over rows of different lengths (see fused_gru.h):
// packing, the forward and backward passes over packed steps, the autograd function and the
// TorchScript operator.
#include "attn/nn/fused_gru.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/script.h>

#include "kernel_support.h"
#include "vector_math.h"

namespace attn::nn {
namespace gru_kernel {  // named: the unity build compiles this file with the layer's others

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// ---- Packing: each direction's real steps, time-major, rows sorted by length ---------------------
// Step t holds the n[t] rows still running, in one order for every step (the longest rows first),
// from packed row off[t]: row j of step t is packed row off[t] + j in both directions.
struct Packing {
  std::int64_t steps = 0, tokens = 0;
  std::vector<std::int64_t> n, off;
  Tensor source[2];   ///< packed row -> row of x viewed [B * T, I], per direction
  Tensor to_forward;  ///< the backward direction's packed row -> the forward one's reading the same step of x
};

Packing pack(const Tensor& lengths_in, std::int64_t B, std::int64_t T) {
  const Tensor lengths = lengths_in.to(torch::kCPU, torch::kInt64).contiguous();
  if (lengths.dim() != 1 || lengths.size(0) != B)
    throw std::invalid_argument("bigru_lengths: lengths must be [B] = [" + std::to_string(B) + "]");
  const std::int64_t* len = lengths.data_ptr<std::int64_t>();
  for (std::int64_t b = 0; b < B; ++b)
    if (len[b] < 0 || len[b] > T)
      throw std::invalid_argument("bigru_lengths: length " + std::to_string(len[b]) + " of row " + std::to_string(b) + " is not in 0.." +
                                  std::to_string(T));
  std::vector<std::int64_t> order(static_cast<std::size_t>(B));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return len[a] > len[b]; });
  Packing p;
  p.steps = B > 0 ? len[order[0]] : 0;
  for (std::int64_t t = 0; t < p.steps; ++t) {
    std::int64_t m = 0;
    while (m < B && len[order[static_cast<std::size_t>(m)]] > t) ++m;
    p.off.push_back(p.tokens);
    p.n.push_back(m);
    p.tokens += m;
  }
  const auto index = torch::TensorOptions().dtype(torch::kInt64);
  p.source[0] = torch::empty({p.tokens}, index);
  p.source[1] = torch::empty({p.tokens}, index);
  p.to_forward = torch::empty({p.tokens}, index);
  std::int64_t *f = p.source[0].data_ptr<std::int64_t>(), *r = p.source[1].data_ptr<std::int64_t>(),
               *back = p.to_forward.data_ptr<std::int64_t>();
  for (std::int64_t t = 0; t < p.steps; ++t)
    for (std::int64_t j = 0; j < p.n[static_cast<std::size_t>(t)]; ++j) {
      const std::int64_t row = order[static_cast<std::size_t>(j)], at = p.off[static_cast<std::size_t>(t)] + j;
      const std::int64_t mirrored = len[row] - 1 - t;  // the step the backward direction reads at its step t
      f[at] = row * T + t;
      r[at] = row * T + mirrored;
      back[at] = p.off[static_cast<std::size_t>(mirrored)] + j;
    }
  return p;
}

/// What one direction's forward pass keeps for its backward pass, packed [tokens, H] each: the
/// gates r, z, n, the recurrent part of n's input (W_hn h + b_hn), the state each step started from.
struct Saved {
  Tensor r, z, n, ghn, h_prev;
};

// ---- The gates, element by element (row-major: a row's 3H gate values, then the next row's) ------
// With vector_math.h's branch-free sigmoid and tanh, so that the compiler vectorises the loops.
using vector_math::sigmoid;
using vector_math::tanh_approx;

/// One step of m rows: gi [m, 3H] (row stride ld_gi) the input projections, gh [m, 3H] (row stride
/// ld_gh; 0: the bias alone, the first step) the recurrent ones, h_prev [m, H] (null: zero) ->
/// r, z, n, ghn and h [m, H].
ATTN_VECTOR_CLONES
void gates_forward(const float* __restrict gi, std::int64_t ld_gi, const float* __restrict gh, std::int64_t ld_gh,
                   const float* __restrict h_prev, float* __restrict r, float* __restrict z, float* __restrict n, float* __restrict ghn,
                   float* __restrict h, std::int64_t m, std::int64_t H) {
  for (std::int64_t j = 0; j < m; ++j) {
    const float* __restrict a = gi + j * ld_gi;
    const float* __restrict b = gh + j * ld_gh;
    const std::int64_t o = j * H;
    for (std::int64_t k = 0; k < H; ++k) {
      const float rk = sigmoid(a[k] + b[k]), zk = sigmoid(a[H + k] + b[H + k]), g = b[2 * H + k];
      const float nk = tanh_approx(a[2 * H + k] + rk * g);
      const float hp = h_prev ? h_prev[o + k] : 0.0f;
      r[o + k] = rk;
      z[o + k] = zk;
      n[o + k] = nk;
      ghn[o + k] = g;
      h[o + k] = nk + zk * (hp - nk);  // h' = (1 - z) n + z h
    }
  }
}

/// One step's backward pass for m rows: dh [m, H] the gradient of the step's states; writes the
/// gradients of the gates' pre-activations, dgi [m, 3H] (the input projections') and dgh [m, 3H]
/// (the recurrent products'), and adds the direct part of h_prev's gradient (dh z) to dh_prev
/// [m, H] (null at the first step).
ATTN_VECTOR_CLONES
void gates_backward(const float* __restrict dh, const float* __restrict r, const float* __restrict z, const float* __restrict n,
                    const float* __restrict ghn, const float* __restrict h_prev, float* __restrict dgi, float* __restrict dgh,
                    float* __restrict dh_prev, std::int64_t m, std::int64_t H) {
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t o = j * H, g = j * 3 * H;
    for (std::int64_t k = 0; k < H; ++k) {
      const float d = dh[o + k], rk = r[o + k], zk = z[o + k], nk = n[o + k];
      const float dn = d * (1.0f - zk) * (1.0f - nk * nk);  // through h' = (1 - z) n + z h, then tanh
      const float dz = d * (h_prev[o + k] - nk) * zk * (1.0f - zk);
      const float dr = dn * ghn[o + k] * rk * (1.0f - rk);
      dgi[g + k] = dgh[g + k] = dr;
      dgi[g + H + k] = dgh[g + H + k] = dz;
      dgi[g + 2 * H + k] = dn;
      dgh[g + 2 * H + k] = dn * rk;
      if (dh_prev) dh_prev[o + k] += d * zk;
    }
  }
}

/// One direction over packed input projections gi [tokens, 3H] (row stride ld_gi, biases added);
/// returns the packed states [tokens, H] and fills `saved` when it is given.
Tensor run_direction(const Packing& p, const Tensor& gi, const Tensor& w_hh, const Tensor& b_hh, Saved* saved) {
  const std::int64_t H = w_hh.size(1), ld_gi = gi.stride(0);
  const auto options = gi.options();
  const Tensor h_all = torch::empty({p.tokens, H}, options);
  Saved scratch;  // without a backward pass, one step's gates at a time
  Saved& s = saved ? *saved : scratch;
  const std::int64_t kept_rows = saved ? p.tokens : (p.steps > 0 ? p.n[0] : 0);
  for (Tensor* t : {&s.r, &s.z, &s.n, &s.ghn}) *t = torch::empty({kept_rows, H}, options);
  if (saved) s.h_prev = torch::zeros({p.tokens, H}, options);
  const Tensor w_hh_t = w_hh.t(), bias = b_hh.contiguous(), gh = torch::empty({p.steps > 0 ? p.n[0] : 0, 3 * H}, options);
  for (std::int64_t t = 0; t < p.steps; ++t) {
    const std::int64_t o = p.off[static_cast<std::size_t>(t)], m = p.n[static_cast<std::size_t>(t)], at = saved ? o : 0;
    const float* h_prev = nullptr;
    const float* recurrent = bias.data_ptr<float>();
    std::int64_t ld_gh = 0;
    if (t > 0) {  // the same rows' previous step
      const Tensor prev = h_all.narrow(0, p.off[static_cast<std::size_t>(t - 1)], m);
      Tensor out = gh.narrow(0, 0, m);
      torch::addmm_out(out, bias, prev, w_hh_t);
      h_prev = prev.data_ptr<float>();
      recurrent = gh.data_ptr<float>();
      ld_gh = 3 * H;
      if (saved) s.h_prev.narrow(0, o, m).copy_(prev);
    }
    gates_forward(gi.data_ptr<float>() + o * ld_gi, ld_gi, recurrent, ld_gh, h_prev, s.r.data_ptr<float>() + at * H,
                  s.z.data_ptr<float>() + at * H, s.n.data_ptr<float>() + at * H, s.ghn.data_ptr<float>() + at * H,
                  h_all.data_ptr<float>() + o * H, m, H);
  }
  return h_all;
}

/// One direction's backward pass: from the gradients of its packed states dh_out [tokens, H]
/// (consumed: each step adds its share of the previous step's), the gradients of the input
/// projections dgi [tokens, 3H] and of the recurrent products dgh [tokens, 3H].
void backward_direction(const Packing& p, const Saved& s, const Tensor& w_hh, Tensor& dh_out, Tensor& dgi, Tensor& dgh) {
  const std::int64_t H = w_hh.size(1);
  dgi = torch::empty({p.tokens, 3 * H}, dh_out.options());
  dgh = torch::empty({p.tokens, 3 * H}, dh_out.options());
  for (std::int64_t t = p.steps - 1; t >= 0; --t) {
    const std::int64_t o = p.off[static_cast<std::size_t>(t)], m = p.n[static_cast<std::size_t>(t)];
    float* dh_prev = t > 0 ? dh_out.data_ptr<float>() + p.off[static_cast<std::size_t>(t - 1)] * H : nullptr;
    gates_backward(dh_out.data_ptr<float>() + o * H, s.r.data_ptr<float>() + o * H, s.z.data_ptr<float>() + o * H,
                   s.n.data_ptr<float>() + o * H, s.ghn.data_ptr<float>() + o * H, s.h_prev.data_ptr<float>() + o * H,
                   dgi.data_ptr<float>() + o * 3 * H, dgh.data_ptr<float>() + o * 3 * H, dh_prev, m, H);
    if (t > 0) dh_out.narrow(0, p.off[static_cast<std::size_t>(t - 1)], m).addmm_(dgh.narrow(0, o, m), w_hh);  // through W_hh h
  }
}

class BiGruFunction : public torch::autograd::Function<BiGruFunction> {
 public:
  static Tensor forward(AutogradContext* ctx, bool keep, const Tensor& x, const Tensor& lengths, const Tensor& w_ih, const Tensor& w_hh,
                        const Tensor& b_ih, const Tensor& b_hh, const Tensor& w_ih_r, const Tensor& w_hh_r, const Tensor& b_ih_r,
                        const Tensor& b_hh_r) {
    if (x.dim() != 3 || x.scalar_type() != torch::kFloat32) throw std::invalid_argument("bigru_lengths: x must be float32 [B, T, I]");
    const std::int64_t B = x.size(0), T = x.size(1), I = x.size(2), H = w_hh.size(1);
    if (w_ih.size(0) != 3 * H || w_ih.size(1) != I || w_ih_r.sizes() != w_ih.sizes() || w_hh_r.sizes() != w_hh.sizes())
      throw std::invalid_argument("bigru_lengths: weights must be [3H, I] and [3H, H] in both directions");
    const Packing p = pack(lengths, B, T);
    const Tensor x_rows = x.contiguous().view({B * T, I});
    const Tensor w_ih_both = torch::cat({w_ih, w_ih_r}), b_ih_both = torch::cat({b_ih, b_ih_r});  // both projections in one product
    // [tokens, 6H] in the forward direction's order, once per distinct row when many repeat
    // (not while training the weights: dropout makes nearly every row distinct)
    const bool training = keep && (w_ih.requires_grad() || w_ih_r.requires_grad());
    const std::optional<DistinctRows> distinct = training ? std::nullopt : distinct_rows(x_rows, p.source[0]);
    const Tensor packed_x = keep || !distinct ? x_rows.index_select(0, p.source[0]) : Tensor();  // [tokens, I]
    const Tensor gi =
        distinct ? torch::addmm(b_ih_both, distinct->rows, w_ih_both.t()).index_select(0, distinct->of.index_select(0, p.source[0]))
                 : torch::addmm(b_ih_both, packed_x, w_ih_both.t());
    const Tensor gi_backward = gi.narrow(1, 3 * H, 3 * H).index_select(0, p.to_forward);
    Saved saved[2];
    const Tensor h[2] = {run_direction(p, gi.narrow(1, 0, 3 * H), w_hh, b_hh, keep ? &saved[0] : nullptr),
                         run_direction(p, gi_backward, w_hh_r, b_hh_r, keep ? &saved[1] : nullptr)};
    Tensor y = torch::zeros({B * T, 2 * H}, x.options());
    for (int d = 0; d < 2; ++d) y.narrow(1, d * H, H).index_copy_(0, p.source[d], h[d]);
    if (keep) {
      ctx->save_for_backward({w_ih_both, w_hh, w_hh_r});
      ctx->saved_data["shape"] = std::vector<std::int64_t>{B, T, I};
      ctx->saved_data["rows_per_step"] = p.n;
      ctx->saved_data["off"] = p.off;
      ctx->saved_data["source"] = p.source[0];
      ctx->saved_data["source_reverse"] = p.source[1];
      ctx->saved_data["to_forward"] = p.to_forward;
      ctx->saved_data["x"] = packed_x;
      for (int d = 0; d < 2; ++d) {
        const std::string k = d ? "_reverse" : "";
        ctx->saved_data["r" + k] = saved[d].r;
        ctx->saved_data["z" + k] = saved[d].z;
        ctx->saved_data["n" + k] = saved[d].n;
        ctx->saved_data["ghn" + k] = saved[d].ghn;
        ctx->saved_data["h_prev" + k] = saved[d].h_prev;
      }
    }
    return y.view({B, T, 2 * H});
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto weights = ctx->get_saved_variables();
    const Tensor w_ih_both = weights[0], w_hh[2] = {weights[1], weights[2]};
    const auto shape = ctx->saved_data["shape"].toIntVector();
    const std::int64_t B = shape[0], T = shape[1], I = shape[2], H = w_hh[0].size(1);
    Packing p;
    p.n = ctx->saved_data["rows_per_step"].toIntVector();
    p.off = ctx->saved_data["off"].toIntVector();
    p.steps = static_cast<std::int64_t>(p.n.size());
    p.source[0] = ctx->saved_data["source"].toTensor();
    p.source[1] = ctx->saved_data["source_reverse"].toTensor();
    p.to_forward = ctx->saved_data["to_forward"].toTensor();
    p.tokens = p.source[0].size(0);
    const Tensor packed_x = ctx->saved_data["x"].toTensor();
    const Tensor dy = grad_outputs[0].contiguous().view({B * T, 2 * H});
    Tensor dgi[2], dgh[2];
    for (int d = 0; d < 2; ++d) {
      const std::string k = d ? "_reverse" : "";
      const Saved s{ctx->saved_data["r" + k].toTensor(), ctx->saved_data["z" + k].toTensor(), ctx->saved_data["n" + k].toTensor(),
                    ctx->saved_data["ghn" + k].toTensor(), ctx->saved_data["h_prev" + k].toTensor()};
      Tensor dh = dy.narrow(1, d * H, H).index_select(0, p.source[d]);  // a copy: the pass consumes it
      backward_direction(p, s, w_hh[d], dh, dgi[d], dgh[d]);
    }
    // Both projections' gradients in the forward direction's order, side by side [tokens, 6H].
    const Tensor dgi_both = torch::cat({dgi[0], torch::zeros_like(dgi[1]).index_copy_(0, p.to_forward, dgi[1])}, 1);
    Tensor dx = torch::zeros({B * T, I}, dy.options());
    if (ctx->needs_input_grad(0)) dx.index_copy_(0, p.source[0], torch::mm(dgi_both, w_ih_both));
    // Autograd's inputs: x (0), lengths (1), then each direction's w_ih, w_hh, b_ih, b_hh (2-5, 6-9);
    // the gradients also have a place for `keep`, first.
    tensor_list out(11);
    out[1] = dx.view({B, T, I});
    if (ctx->needs_input_grad({{2, 10}})) {
      const Tensor dw_ih = torch::mm(dgi_both.t(), packed_x), db_ih = dgi_both.sum(0);
      for (int d = 0; d < 2; ++d) {
        const std::string k = d ? "_reverse" : "";
        const Tensor h_prev = ctx->saved_data["h_prev" + k].toTensor();
        out[static_cast<std::size_t>(3 + 4 * d)] = dw_ih.narrow(0, 3 * H * d, 3 * H);
        out[static_cast<std::size_t>(4 + 4 * d)] = torch::mm(dgh[d].t(), h_prev);
        out[static_cast<std::size_t>(5 + 4 * d)] = db_ih.narrow(0, 3 * H * d, 3 * H);
        out[static_cast<std::size_t>(6 + 4 * d)] = dgh[d].sum(0);
      }
    }
    return out;
  }
};

Tensor bigru_op(const Tensor& x, const Tensor& lengths, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                const Tensor& w_ih_r, const Tensor& w_hh_r, const Tensor& b_ih_r, const Tensor& b_hh_r) {
  return bigru_lengths(x, lengths, {w_ih, w_hh, b_ih, b_hh}, {w_ih_r, w_hh_r, b_ih_r, b_hh_r});
}

}  // namespace gru_kernel

using gru_kernel::BiGruFunction;
using torch::Tensor;

Tensor bigru_lengths(const Tensor& x, const Tensor& lengths, const GruWeights& f, const GruWeights& b) {
  bool grad = false;
  for (const Tensor* t : {&x, &f.weight_ih, &f.weight_hh, &f.bias_ih, &f.bias_hh, &b.weight_ih, &b.weight_hh, &b.bias_ih, &b.bias_hh})
    grad = grad || t->requires_grad();
  const bool keep = grad && torch::GradMode::is_enabled();
  return BiGruFunction::apply(keep, x, lengths, f.weight_ih, f.weight_hh, f.bias_ih, f.bias_hh, b.weight_ih, b.weight_hh, b.bias_ih,
                              b.bias_hh);
}

void register_fused_gru() {
  static const auto registered = torch::RegisterOperators().op(
      "attn::bigru_lengths(Tensor x, Tensor lengths, Tensor w_ih, Tensor w_hh, Tensor b_ih, Tensor b_hh, "
      "Tensor w_ih_reverse, Tensor w_hh_reverse, Tensor b_ih_reverse, Tensor b_hh_reverse) -> Tensor",
      &gru_kernel::bigru_op);
  (void)registered;
}

}  // namespace attn::nn
