// attn's CPU kernel for the masked bidirectional LSTM (see fused_lstm.h): packing, the gates'
// forward and backward passes, the autograd function and the TorchScript operator.
#include "attn/nn/fused_lstm.h"
#include "attn/nn/repeatable_backward.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <ATen/Parallel.h>
#include <torch/script.h>

#include "kernel_support.h"
#include "row_blocks.h"
#include "vector_math.h"

namespace attn::nn {
namespace {

using torch::Tensor;
using namespace row_blocks;

// ---- The gates, element by element --------------------------------------------------------------
// With vector_math.h's branch-free exp, sigmoid and tanh, so that the compiler vectorises the loops.

using vector_math::sigmoid;
using vector_math::tanh_approx;

// The kernel keeps a direction's values unit-major: gates [4H, N], c and h [H, N], one row per unit
// over the N packed rows, so that a step's values of one unit (its rows of the batch) are
// contiguous and the loops below run over the batch: long, vectorised loops, whatever H is.

/// One step's gates: g points at the step's first column of gates [4H, ld] (W_ih x + W_hh h', the
/// bias not yet added; replaced by the activated i, f, g, o), bias [4H], c_prev at the previous
/// step's first column of c [H, ld_prev] (zeros at the first step), c at this step's columns of c
/// [H, ld], h at the step's hidden states [H, ld_h]; `rows` columns each.
ATTN_VECTOR_CLONES
void gates_forward(float* __restrict g, const float* __restrict bias, const float* __restrict c_prev, std::int64_t ld_prev,
                   float* __restrict c, float* __restrict h, std::int64_t rows, std::int64_t H, std::int64_t ld, std::int64_t ld_h) {
  for (std::int64_t k = 0; k < H; ++k) {
    float* __restrict gi = g + k * ld;
    float* __restrict gf = g + (H + k) * ld;
    float* __restrict gg = g + (2 * H + k) * ld;
    float* __restrict go = g + (3 * H + k) * ld;
    const float* __restrict cp = c_prev + k * ld_prev;
    float* __restrict ck = c + k * ld;
    float* __restrict hk = h + k * ld_h;
    const float bi = bias[k], bf = bias[H + k], bg = bias[2 * H + k], bo = bias[3 * H + k];
    for (std::int64_t j = 0; j < rows; ++j) {
      const float i = sigmoid(gi[j] + bi), f = sigmoid(gf[j] + bf), cell = tanh_approx(gg[j] + bg), o = sigmoid(go[j] + bo);
      const float cv = f * cp[j] + i * cell;  // torch's order: f c' + i g
      gi[j] = i;
      gf[j] = f;
      gg[j] = cell;
      go[j] = o;
      ck[j] = cv;
      hk[j] = o * tanh_approx(cv);
    }
  }
}

/// Batches of at most this many rows run row-major (few_rows_step): up to here it is the faster
/// (measured: 8 rows 3.6x, 64 rows 1.2x; from about 100 rows on, the unit-major steps with
/// LibTorch's products are).
constexpr std::int64_t kFewRows = 64;

using Vec16 = float __attribute__((vector_size(64)));  // GCC's vector extension: one AVX-512 register, two AVX2, four SSE

/// g[j][u] += sum_k h_prev[j][k] w_hh_t[k][u] for R rows and 16 outputs u0.., with the R sums in
/// registers while W_hh^T's column block is read once (R is a constant: nothing spills).
template <int R>
__attribute__((always_inline)) inline void recurrent_block(float* __restrict g, const float* __restrict h_prev,
                                                           const float* __restrict w_hh_t, std::int64_t u0, std::int64_t H) {
  const std::int64_t G = 4 * H;
  Vec16 acc[R];
  for (int j = 0; j < R; ++j) std::memcpy(&acc[j], g + j * G + u0, sizeof(Vec16));
  for (std::int64_t k = 0; k < H; ++k) {
    Vec16 w;
    std::memcpy(&w, w_hh_t + k * G + u0, sizeof(Vec16));
    for (int j = 0; j < R; ++j) acc[j] += h_prev[j * H + k] * w;
  }
  for (int j = 0; j < R; ++j) std::memcpy(g + j * G + u0, &acc[j], sizeof(Vec16));
}

template <int R>
__attribute__((always_inline)) inline void recurrent_rows(float* __restrict g, const float* __restrict h_prev,
                                                          const float* __restrict w_hh_t, std::int64_t H) {
  const std::int64_t G = 4 * H;
  std::int64_t u = 0;
  for (; u + 16 <= G; u += 16) recurrent_block<R>(g, h_prev, w_hh_t, u, H);
  for (; u < G; ++u)  // 4H not a multiple of 16
    for (int j = 0; j < R; ++j)
      for (std::int64_t k = 0; k < H; ++k) g[j * G + u] += h_prev[j * H + k] * w_hh_t[k * G + u];
}

/// One step of few rows, row-major: g [rows, 4H] holds W_ih x (replaced by the
/// activated i, f, g, o), h_prev and c_prev [rows, H] the states the rows start from (null at the
/// first step), c and h [rows, H] are written. w_hh_t is W_hh^T [H, 4H], read once for all the rows;
/// scale [4H] is 2 on the g gates' quarter, 1 elsewhere.
ATTN_VECTOR_CLONES
void few_rows_step(float* __restrict g, const float* __restrict bias, const float* __restrict scale, const float* __restrict w_hh_t,
                   const float* __restrict h_prev, const float* __restrict c_prev, float* __restrict c, float* __restrict h,
                   std::int64_t rows, std::int64_t H) {
  const std::int64_t G = 4 * H;
  for (std::int64_t j = 0; j < rows; ++j)
    for (std::int64_t u = 0; u < G; ++u) g[j * G + u] += bias[u];
  if (h_prev)  // g += W_hh h_prev, twelve rows at a time (a fixed-size kernel each: nothing spills)
    for (std::int64_t j0 = 0; j0 < rows; j0 += 12) {
      float* gj = g + j0 * G;
      const float* hj = h_prev + j0 * H;
      switch (std::min<std::int64_t>(12, rows - j0)) {
        case 1:
          recurrent_rows<1>(gj, hj, w_hh_t, H);
          break;
        case 2:
          recurrent_rows<2>(gj, hj, w_hh_t, H);
          break;
        case 3:
          recurrent_rows<3>(gj, hj, w_hh_t, H);
          break;
        case 4:
          recurrent_rows<4>(gj, hj, w_hh_t, H);
          break;
        case 5:
          recurrent_rows<5>(gj, hj, w_hh_t, H);
          break;
        case 6:
          recurrent_rows<6>(gj, hj, w_hh_t, H);
          break;
        case 7:
          recurrent_rows<7>(gj, hj, w_hh_t, H);
          break;
        case 8:
          recurrent_rows<8>(gj, hj, w_hh_t, H);
          break;
        case 9:
          recurrent_rows<9>(gj, hj, w_hh_t, H);
          break;
        case 10:
          recurrent_rows<10>(gj, hj, w_hh_t, H);
          break;
        case 11:
          recurrent_rows<11>(gj, hj, w_hh_t, H);
          break;
        default:
          recurrent_rows<12>(gj, hj, w_hh_t, H);
          break;
      }
    }
  // The activations in passes over whole rows (no short loops with scalar tails): i, f and o are
  // sigmoids, g = tanh(x) = 2 sigmoid(2x) - 1, so one sigmoid pass over a row's 4H values with
  // scale[u] 2 on g's quarter, else 1: s sigmoid(s x) - (s - 1).
  for (std::int64_t j = 0; j < rows; ++j) {
    float* __restrict row = g + j * G;
    for (std::int64_t u = 0; u < G; ++u) row[u] = scale[u] * sigmoid(scale[u] * row[u]) - (scale[u] - 1.0f);
  }
  for (std::int64_t j = 0; j < rows; ++j) {
    const float* __restrict pi = g + j * G;
    const float* __restrict pf = pi + H;
    const float* __restrict pg = pf + H;
    float* __restrict cj = c + j * H;
    if (c_prev) {
      const float* __restrict cp = c_prev + j * H;
      for (std::int64_t k = 0; k < H; ++k) cj[k] = pf[k] * cp[k] + pi[k] * pg[k];  // f c' + i g
    } else {
      for (std::int64_t k = 0; k < H; ++k) cj[k] = pi[k] * pg[k];
    }
  }
  for (std::int64_t n = 0; n < rows * H; ++n) h[n] = tanh_approx(c[n]);  // every row's tanh(c) in one pass
  for (std::int64_t j = 0; j < rows; ++j) {
    const float* __restrict po = g + j * G + 3 * H;
    float* __restrict hj = h + j * H;
    for (std::int64_t k = 0; k < H; ++k) hj[k] *= po[k];  // h = o tanh(c)
  }
}

/// One step's backward pass, in the layout above: g [4H, ld] holds the activated gates and gets
/// their pre-activation gradients in their place (each value is read before it is overwritten: the
/// backward pass needs a step's gates only once, and writing where it reads moves half the memory
/// a separate gradient would); from c, c_prev [H, ld_prev] (zeros at the first step), and the
/// gradient of this step's h (its output's plus the next step's) dh [H, ld_next] and c's from the
/// next step dc_next [H, ld_next]; replaces dc_next with the gradient of c_prev.
ATTN_VECTOR_CLONES
void gates_backward(float* __restrict g, const float* __restrict c, const float* __restrict c_prev, std::int64_t ld_prev,
                    const float* __restrict dh, float* __restrict dc_next, std::int64_t rows, std::int64_t H, std::int64_t ld,
                    std::int64_t ld_next) {
  for (std::int64_t k = 0; k < H; ++k) {
    float* __restrict di = g + k * ld;
    float* __restrict df = g + (H + k) * ld;
    float* __restrict dgg = g + (2 * H + k) * ld;
    float* __restrict dgo = g + (3 * H + k) * ld;
    const float* __restrict ck = c + k * ld;
    const float* __restrict cp = c_prev + k * ld_prev;
    const float* __restrict dhk = dh + k * ld_next;
    float* __restrict dck = dc_next + k * ld_next;
    for (std::int64_t j = 0; j < rows; ++j) {
      const float i = di[j], f = df[j], cell = dgg[j], o = dgo[j];
      const float tc = tanh_approx(ck[j]);
      const float dc = dck[j] + dhk[j] * o * (1.0f - tc * tc);
      di[j] = dc * cell * i * (1.0f - i);
      df[j] = dc * cp[j] * f * (1.0f - f);
      dgg[j] = dc * i * (1.0f - cell * cell);
      dgo[j] = dhk[j] * tc * o * (1.0f - o);
      dck[j] = dc * f;
    }
  }
}

/// sums[u] += sum_j block[u * ld + j] for u < count, j < rows: a step's share of the bias gradient,
/// summed while its gates' gradients are still in cache (sixteen running sums: vectorised, and
/// the same order on any thread count).
ATTN_VECTOR_CLONES
void add_row_sums(const float* __restrict block, std::int64_t ld, std::int64_t rows, std::int64_t count, float* __restrict sums) {
  for (std::int64_t u = 0; u < count; ++u) {
    const float* __restrict row = block + u * ld;
    float acc[16] = {};
    std::int64_t j = 0;
    for (; j + 16 <= rows; j += 16)
      for (int l = 0; l < 16; ++l) acc[l] += row[j + l];
    float total = 0.0f;
    for (; j < rows; ++j) total += row[j];
    for (int l = 0; l < 16; ++l) total += acc[l];
    sums[u] += total;
  }
}

// ---- Packing: each direction's real steps, time-major, rows sorted by length -------------------

struct Packing {
  std::int64_t H = 0;                // hidden size
  std::int64_t steps = 0;            // the longest row's real steps
  std::vector<std::int64_t> batch;   // batch[t]: rows with more than t real steps (a prefix of the sorted rows)
  std::vector<std::int64_t> offset;  // offset[t]: the first packed row of step t; offset[steps]: all of them
  Tensor source[2];                  // int64 [N] per direction: the packed row's b * T + position in x
  std::vector<std::int64_t> padded;  // the b * T + t of every padded position
};

Packing pack(const Tensor& mask, std::int64_t H) {
  const Tensor m = (mask != 0).to(torch::kUInt8).contiguous();
  const std::int64_t B = m.size(0), T = m.size(1);
  const std::uint8_t* real = m.data_ptr<std::uint8_t>();
  std::vector<std::vector<std::int64_t>> positions(static_cast<std::size_t>(B));
  std::vector<std::int64_t> padded;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      if (real[b * T + t])
        positions[static_cast<std::size_t>(b)].push_back(t);
      else
        padded.push_back(b * T + t);
    }
  std::vector<std::int64_t> order(static_cast<std::size_t>(B));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return positions[static_cast<std::size_t>(a)].size() > positions[static_cast<std::size_t>(b)].size();
  });
  Packing p;
  p.H = H;
  p.padded = std::move(padded);
  p.steps = B ? static_cast<std::int64_t>(positions[static_cast<std::size_t>(order[0])].size()) : 0;
  p.offset.push_back(0);
  for (std::int64_t t = 0; t < p.steps; ++t) {
    std::int64_t n = 0;
    while (n<B&& static_cast<std::int64_t>(positions[static_cast<std::size_t>(order[static_cast<std::size_t>(n)])].size())> t) ++n;
    p.batch.push_back(n);
    p.offset.push_back(p.offset.back() + n);
  }
  const std::int64_t N = p.offset.back();
  for (Tensor& s : p.source) s = torch::empty({N}, torch::kInt64);
  std::int64_t* fwd = p.source[0].data_ptr<std::int64_t>();
  std::int64_t* bwd = p.source[1].data_ptr<std::int64_t>();
  for (std::int64_t t = 0; t < p.steps; ++t) {
    for (std::int64_t j = 0; j < p.batch[static_cast<std::size_t>(t)]; ++j) {
      const std::int64_t b = order[static_cast<std::size_t>(j)];
      const auto& pos = positions[static_cast<std::size_t>(b)];
      const std::int64_t n = p.offset[static_cast<std::size_t>(t)] + j;
      fwd[n] = b * T + pos[static_cast<std::size_t>(t)];
      bwd[n] = b * T + pos[pos.size() - 1 - static_cast<std::size_t>(t)];
    }
  }
  return p;
}

// ---- The input projection ----------------------------------------------------------------------

/// The input projection W_ih x of each distinct row once: [U, 4H].
Tensor distinct_projection(const DistinctRows& distinct, const Tensor& w_ih) { return torch::mm(distinct.rows, w_ih.t()); }

/// Direction d's input projection W_ih x of every packed row at once: [N, 4H], or unit-major
/// [4H, N]. From x_packed (the direction's packed rows), or with `distinct`, from each distinct
/// row's projection.
Tensor input_projection(const Tensor& x_packed, const DistinctRows* distinct, const Packing& p, int d, const Tensor& w_ih,
                        bool unit_major) {
  if (!distinct) return unit_major ? torch::mm(w_ih, x_packed.t()) : torch::mm(x_packed, w_ih.t());
  const Tensor at = distinct->of.index_select(0, p.source[d]);
  if (!unit_major) return distinct_projection(*distinct, w_ih).index_select(0, at);
  const Tensor projected = torch::mm(w_ih, distinct->rows.t());  // [4H, U]
  const std::int64_t G = projected.size(0), U = projected.size(1), N = at.size(0);
  Tensor out = torch::empty({G, N}, projected.options());
  const std::int64_t* place = at.data_ptr<std::int64_t>();
  for (std::int64_t u = 0; u < G; ++u) {  // a unit's row of every distinct projection stays in cache
    const float* __restrict from = projected.data_ptr<float>() + u * U;
    float* __restrict to = out.data_ptr<float>() + u * N;
    for (std::int64_t n = 0; n < N; ++n) to[n] = from[place[n]];
  }
  return out;
}

// ---- One direction --------------------------------------------------------------------------------

/// Whether a forward pass keeps what its backward pass needs (scoring keeps nothing).
enum class Keep { kNothing, kForBackward };

/// What a direction's forward pass keeps for its backward pass: the packed input x [N, I], and
/// unit-major (see above) the activated gates [4H, N], the cell states c [H, N] and, in each packed
/// row's column, the hidden state it started from, h_prev [H, N] (zeros at the first step).
struct Pass {
  Tensor x, gates, c, h_prev;
};

/// Direction d's forward pass; writes its half of every real row of y [B * T, 2H].
Pass forward_direction(const Packing& p, int d, const Tensor& x_rows, const DistinctRows* distinct, const LstmWeights& w, float* y) {
  Pass s;
  const std::int64_t H = p.H;
  s.x = x_rows.index_select(0, p.source[d]);
  const std::int64_t N = s.x.size(0), widest = p.steps ? p.batch[0] : 0;
  s.gates = input_projection(s.x, distinct, p, d, w.weight_ih, /*unit_major=*/true);
  s.c = torch::empty({H, N}, s.x.options());
  s.h_prev = torch::empty({H, N}, s.x.options());
  s.h_prev.narrow(1, 0, widest).zero_();
  const Tensor bias = (w.bias_ih + w.bias_hh).contiguous(), zeros = torch::zeros({H, widest}, s.x.options());
  const Tensor h = torch::empty({H, widest}, s.x.options());  // the step's hidden states
  const std::int64_t* source = p.source[d].data_ptr<std::int64_t>();
  float* g = s.gates.data_ptr<float>();
  float* c = s.c.data_ptr<float>();
  float* hp = s.h_prev.data_ptr<float>();
  for (std::int64_t t = 0; t < p.steps; ++t) {
    const std::int64_t rows = p.batch[static_cast<std::size_t>(t)], at = p.offset[static_cast<std::size_t>(t)];
    const float* c_prev = t > 0 ? c + p.offset[static_cast<std::size_t>(t) - 1] : zeros.data_ptr<float>();
    const std::int64_t ld_prev = t > 0 ? N : widest;
    if (t > 0) s.gates.narrow(1, at, rows).addmm_(w.weight_hh, s.h_prev.narrow(1, at, rows));  // gates += W_hh h_{t-1}
    gates_forward(g + at, bias.data_ptr<float>(), c_prev, ld_prev, c + at, h.data_ptr<float>(), rows, H, N, widest);
    if (t + 1 < p.steps) {  // the rows that go on start the next step from h
      const std::int64_t next = p.offset[static_cast<std::size_t>(t) + 1], going_on = p.batch[static_cast<std::size_t>(t) + 1];
      for (std::int64_t k = 0; k < H; ++k) std::memcpy(hp + k * N + next, h.data_ptr<float>() + k * widest, sizeof(float) * going_on);
    }
    scatter_rows(h.data_ptr<float>(), widest, rows, H, source + at, y, 2 * H, d * H);
  }
  return s;
}

/// Direction d's forward pass for a batch of at most kFewRows rows (a server's batches, evaluate's small ones),
/// row-major; with `keep`, its Pass is laid out as forward_direction's, for the same backward pass.
Pass forward_direction_few(const Packing& p, int d, const Tensor& x_rows, const DistinctRows* distinct, const LstmWeights& w, float* y,
                           Keep keep) {
  const std::int64_t H = p.H, G = 4 * H, N = p.offset.back();
  Pass s;
  if (keep == Keep::kForBackward || !distinct) s.x = x_rows.index_select(0, p.source[d]);
  // Scoring with distinct rows keeps no gates: each step copies its rows' projections from the
  // distinct rows' into a step's buffer (in cache), in place of gathering all N first.
  const bool by_step = keep == Keep::kNothing && distinct;
  const Tensor gates = by_step ? distinct_projection(*distinct, w.weight_ih)                                // [U, 4H]
                               : input_projection(s.x, distinct, p, d, w.weight_ih, /*unit_major=*/false);  // [N, 4H]
  const Tensor place = by_step ? distinct->of.index_select(0, p.source[d]) : Tensor();  // each packed row's distinct row
  const Tensor step = by_step ? torch::empty({p.steps ? p.batch[0] : 0, G}, x_rows.options()) : Tensor();
  const Tensor c = torch::empty({N, H}, x_rows.options()), h = torch::empty({N, H}, x_rows.options());
  const Tensor bias = (w.bias_ih + w.bias_hh).contiguous(), w_hh_t = w.weight_hh.t().contiguous();
  Tensor scale = torch::ones({G}, x_rows.options());
  scale.narrow(0, 2 * H, H).fill_(2.0f);
  const std::int64_t* source = p.source[d].data_ptr<std::int64_t>();
  float* gp = gates.data_ptr<float>();
  float* cp = c.data_ptr<float>();
  float* hp = h.data_ptr<float>();
  for (std::int64_t t = 0; t < p.steps; ++t) {
    const std::int64_t rows = p.batch[static_cast<std::size_t>(t)], at = p.offset[static_cast<std::size_t>(t)];
    const std::int64_t before = t > 0 ? p.offset[static_cast<std::size_t>(t) - 1] : 0;  // a step's rows start the next one's
    float* g = gp + at * G;
    if (by_step) {
      g = step.data_ptr<float>();
      const std::int64_t* from = place.data_ptr<std::int64_t>() + at;
      for (std::int64_t j = 0; j < rows; ++j) std::memcpy(g + j * G, gp + from[j] * G, sizeof(float) * G);
    }
    few_rows_step(g, bias.data_ptr<float>(), scale.data_ptr<float>(), w_hh_t.data_ptr<float>(), t > 0 ? hp + before * H : nullptr,
                  t > 0 ? cp + before * H : nullptr, cp + at * H, hp + at * H, rows, H);
    for (std::int64_t j = 0; j < rows; ++j) std::memcpy(y + source[at + j] * 2 * H + d * H, hp + (at + j) * H, sizeof(float) * H);
  }
  if (keep == Keep::kForBackward) {
    s.gates = gates.t().contiguous();
    s.c = c.t().contiguous();
    Tensor h_prev = torch::zeros({N, H}, x_rows.options());
    for (std::int64_t t = 1; t < p.steps; ++t)
      h_prev.narrow(0, p.offset[static_cast<std::size_t>(t)], p.batch[static_cast<std::size_t>(t)])
          .copy_(h.narrow(0, p.offset[static_cast<std::size_t>(t) - 1], p.batch[static_cast<std::size_t>(t)]));
    s.h_prev = h_prev.t().contiguous();
  }
  return s;
}

/// The gradients of one direction: x (packed), weight_ih, weight_hh and the bias.
struct Grads {
  Tensor x, weight_ih, weight_hh, bias;
};

/// Direction d's backward pass from dy [B * T, 2H], the gradient of the forward pass's y. The
/// gates' gradients replace the pass's gates (s.gates: used up) unless `repeatable` (then they are
/// computed apart, and the pass stays as it was). Without `weights`, only x's gradient (the weights
/// are constants: an importance method's input gradients).
Grads backward_direction(const Packing& p, int d, const Pass& s, const float* dy, const LstmWeights& w, bool weights, bool repeatable) {
  const std::int64_t H = p.H, N = s.x.size(0), widest = p.steps ? p.batch[0] : 0;
  const Tensor dgates = repeatable ? s.gates.clone() : s.gates;  // filled step by step, from the last
  // dh: the gradient of the step's h, its output's and the next step's; dc: c's from the next step.
  const Tensor dh = torch::zeros({H, widest}, s.x.options()), dc = torch::zeros({H, widest}, s.x.options()),
               zeros = torch::zeros({H, widest}, s.x.options());
  const std::int64_t* source = p.source[d].data_ptr<std::int64_t>();
  float* dg = dgates.data_ptr<float>();
  const float* c = s.c.data_ptr<float>();
  float* dhp = dh.data_ptr<float>();
  const Tensor w_hh_t = w.weight_hh.t();
  const Tensor d_bias = torch::zeros({4 * H}, s.x.options());
  for (std::int64_t t = p.steps - 1; t >= 0; --t) {
    const std::int64_t rows = p.batch[static_cast<std::size_t>(t)], at = p.offset[static_cast<std::size_t>(t)];
    gather_rows_add(dy, 2 * H, d * H, source + at, rows, H, dhp, widest);  // dh += the step's rows of dy
    if (t > 0) {
      gates_backward(dg + at, c + at, c + p.offset[static_cast<std::size_t>(t) - 1], N, dhp, dc.data_ptr<float>(), rows, H, N, widest);
      if (weights) add_row_sums(dg + at, N, rows, 4 * H, d_bias.data_ptr<float>());
      Tensor into = dh.narrow(1, 0, rows);
      torch::mm_out(into, w_hh_t, dgates.narrow(1, at, rows));                      // dh_{t-1} = W_hh^T dgates_t
      const std::int64_t ending = p.batch[static_cast<std::size_t>(t) - 1] - rows;  // rows whose last step is t - 1
      if (ending > 0) {
        dh.narrow(1, rows, ending).zero_();
        dc.narrow(1, rows, ending).zero_();
      }
    } else {
      gates_backward(dg + at, c + at, zeros.data_ptr<float>(), widest, dhp, dc.data_ptr<float>(), rows, H, N, widest);
      if (weights) add_row_sums(dg + at, N, rows, 4 * H, d_bias.data_ptr<float>());
    }
  }
  Grads out;
  if (weights) {
    out.weight_ih = torch::mm(dgates, s.x);
    out.weight_hh = torch::mm(dgates, s.h_prev.t());  // sum over steps of dgates_t h_{t-1}^T (h_{-1} = 0)
    out.bias = d_bias;
  }
  Tensor x_grad = repeatable ? torch::empty_like(s.x) : s.x;  // x is used up: its gradient takes its place
  torch::mm_out(x_grad, dgates.t(), w.weight_ih);
  out.x = x_grad;
  return out;
}

// ---- The autograd function ----------------------------------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

void check_inputs(const Tensor& x, const Tensor& mask, const LstmWeights& w0, const LstmWeights& w1) {
  TORCH_CHECK(x.dim() == 3 && x.scalar_type() == torch::kFloat32 && x.device().is_cpu(),
              "bilstm_masked: x must be a float32 CPU tensor [B, T, I]");
  TORCH_CHECK(mask.dim() == 2 && mask.size(0) == x.size(0) && mask.size(1) == x.size(1), "bilstm_masked: mask must be [B, T] like x");
  for (const LstmWeights* w : {&w0, &w1}) {
    const std::int64_t H4 = w->weight_hh.size(0);
    TORCH_CHECK(w->weight_ih.dim() == 2 && w->weight_ih.size(0) == H4 && w->weight_ih.size(1) == x.size(2) && H4 % 4 == 0 &&
                    w->weight_hh.size(1) == H4 / 4 && w->bias_ih.numel() == H4 && w->bias_hh.numel() == H4,
                "bilstm_masked: weights of another shape than the input and each other");
    for (const Tensor* t : {&w->weight_ih, &w->weight_hh, &w->bias_ih, &w->bias_hh})
      TORCH_CHECK(t->scalar_type() == torch::kFloat32, "bilstm_masked: float32 weights only");
  }
  TORCH_CHECK(w0.weight_hh.sizes() == w1.weight_hh.sizes(), "bilstm_masked: the directions' hidden sizes differ");
}

/// The packing and a direction's pass as the autograd context keeps them (IValues).
void save(AutogradContext* ctx, const Packing& p, const std::array<Pass, 2>& passes) {
  auto& d = ctx->saved_data;
  d["H"] = p.H;
  d["steps"] = p.steps;
  d["batch"] = p.batch;
  d["offset"] = p.offset;
  d["padded"] = p.padded;
  d["source0"] = p.source[0];
  d["source1"] = p.source[1];
  for (int k = 0; k < 2; ++k) {
    const std::string n = std::to_string(k);
    d["x" + n] = passes[static_cast<std::size_t>(k)].x;
    d["gates" + n] = passes[static_cast<std::size_t>(k)].gates;
    d["c" + n] = passes[static_cast<std::size_t>(k)].c;
    d["h_prev" + n] = passes[static_cast<std::size_t>(k)].h_prev;
  }
}

void restore(AutogradContext* ctx, Packing& p, std::array<Pass, 2>& passes) {
  auto& d = ctx->saved_data;
  p.H = d["H"].toInt();
  p.steps = d["steps"].toInt();
  p.batch = d["batch"].toIntVector();
  p.offset = d["offset"].toIntVector();
  p.padded = d["padded"].toIntVector();
  p.source[0] = d["source0"].toTensor();
  p.source[1] = d["source1"].toTensor();
  for (int k = 0; k < 2; ++k) {
    const std::string n = std::to_string(k);
    passes[static_cast<std::size_t>(k)] = {d["x" + n].toTensor(), d["gates" + n].toTensor(), d["c" + n].toTensor(),
                                           d["h_prev" + n].toTensor()};
  }
}

class BiLstmFunction : public torch::autograd::Function<BiLstmFunction> {
 public:
  static Tensor forward(AutogradContext* ctx, Keep keep, const Tensor& x, const Tensor& mask, const Tensor& w_ih, const Tensor& w_hh,
                        const Tensor& b_ih, const Tensor& b_hh, const Tensor& w_ih_r, const Tensor& w_hh_r, const Tensor& b_ih_r,
                        const Tensor& b_hh_r) {
    const LstmWeights w[2] = {{w_ih.contiguous(), w_hh.contiguous(), b_ih, b_hh},
                              {w_ih_r.contiguous(), w_hh_r.contiguous(), b_ih_r, b_hh_r}};
    check_inputs(x, mask, w[0], w[1]);
    const std::int64_t B = x.size(0), T = x.size(1), I = x.size(2), H = w_hh.size(1);
    const Packing packing = pack(mask, H);
    const Tensor x_rows = x.contiguous().view({B * T, I});
    std::array<Pass, 2> passes;
    Tensor y = torch::empty({B * T, 2 * H}, x.options());  // every real row is written below
    float* out = y.data_ptr<float>();
    zero_rows(out, 2 * H, packing.padded);
    const bool few = packing.steps > 0 && packing.batch[0] <= kFewRows;
    // (not while training the weights: dropout makes nearly every row distinct, measured no faster)
    const bool training = keep == Keep::kForBackward && (w_ih.requires_grad() || w_ih_r.requires_grad());
    const std::optional<DistinctRows> distinct = training ? std::nullopt : distinct_rows(x_rows, packing.source[0]);
    const DistinctRows* once = distinct ? &*distinct : nullptr;
    on_two_threads([&](int d) {
      passes[static_cast<std::size_t>(d)] =
          few ? forward_direction_few(packing, d, x_rows, once, w[d], out, keep) : forward_direction(packing, d, x_rows, once, w[d], out);
    });
    if (keep == Keep::kForBackward) {
      ctx->save_for_backward({w_ih, w_hh, w_ih_r, w_hh_r});
      ctx->saved_data["repeatable"] = RepeatableBackward::active();
      ctx->saved_data["shape"] = std::vector<std::int64_t>{B, T, I};
      save(ctx, packing, passes);
    }
    return y.view({B, T, 2 * H});
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    // The backward pass overwrites the saved gates with their gradients: it can run once, unless the
    // forward pass ran under RepeatableBackward.
    const bool repeatable = ctx->saved_data["repeatable"].toBool();
    if (!repeatable) use_saved_once(ctx, "bilstm_masked");
    const LstmWeights w[2] = {{saved[0].contiguous(), saved[1].contiguous(), {}, {}},
                              {saved[2].contiguous(), saved[3].contiguous(), {}, {}}};
    const auto shape = ctx->saved_data["shape"].toIntVector();
    const std::int64_t B = shape[0], T = shape[1], I = shape[2];
    Packing p;
    std::array<Pass, 2> passes;
    restore(ctx, p, passes);
    const Tensor dy = grad_outputs[0].contiguous();
    // Autograd's inputs: x (0), mask (1), then each direction's four weights (2-5, 6-9).
    const bool weights[2] = {ctx->needs_input_grad({{2, 6}}), ctx->needs_input_grad({{6, 10}})};
    Grads g[2];
    on_two_threads([&](int d) {
      g[d] = backward_direction(p, d, passes[static_cast<std::size_t>(d)], dy.data_ptr<float>(), w[d], weights[d], repeatable);
    });
    Tensor dx = torch::empty({B * T, I}, dy.options());
    float* dxp = dx.data_ptr<float>();
    zero_rows(dxp, I, p.padded);
    for (int d = 0; d < 2; ++d) {  // each real row of x gets its gradient from each direction (once each: no races)
      const std::int64_t* source = p.source[d].data_ptr<std::int64_t>();
      const float* from = g[d].x.data_ptr<float>();
      at::parallel_for(0, g[d].x.size(0), 256,
                       [&](std::int64_t begin, std::int64_t end) { add_rows(from, source, begin, end, I, dxp, /*add=*/d == 1); });
    }
    return {Tensor(),  dx.view({B, T, I}), Tensor(),       g[0].weight_ih, g[0].weight_hh, g[0].bias,
            g[0].bias, g[1].weight_ih,     g[1].weight_hh, g[1].bias,      g[1].bias};
  }
};

Tensor bilstm_op(const Tensor& x, const Tensor& mask, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                 const Tensor& w_ih_r, const Tensor& w_hh_r, const Tensor& b_ih_r, const Tensor& b_hh_r) {
  return bilstm_masked(x, mask, {w_ih, w_hh, b_ih, b_hh}, {w_ih_r, w_hh_r, b_ih_r, b_hh_r});
}

}  // namespace

Tensor bilstm_masked(const Tensor& x, const Tensor& mask, const LstmWeights& f, const LstmWeights& b) {
  bool grad = false;
  for (const Tensor* t : {&x, &f.weight_ih, &f.weight_hh, &f.bias_ih, &f.bias_hh, &b.weight_ih, &b.weight_hh, &b.bias_ih, &b.bias_hh})
    grad = grad || t->requires_grad();
  const Keep keep = grad && torch::GradMode::is_enabled() ? Keep::kForBackward : Keep::kNothing;
  return BiLstmFunction::apply(keep, x, mask, f.weight_ih, f.weight_hh, f.bias_ih, f.bias_hh, b.weight_ih, b.weight_hh, b.bias_ih,
                               b.bias_hh);
}

void register_fused_lstm() {
  static const auto registered = torch::RegisterOperators().op(
      "attn::bilstm_masked(Tensor x, Tensor mask, Tensor w_ih, Tensor w_hh, Tensor b_ih, Tensor b_hh, "
      "Tensor w_ih_reverse, Tensor w_hh_reverse, Tensor b_ih_reverse, Tensor b_hh_reverse) -> Tensor",
      &bilstm_op);
  (void)registered;
}

}  // namespace attn::nn
