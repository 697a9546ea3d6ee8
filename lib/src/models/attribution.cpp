// The importance methods' math (see attribution.h): each method's one home.
#include "attn/models/attribution.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include "attn/nn/repeatable_backward.h"

namespace attn::models {

Quadrature gauss_legendre(int n) {
  if (n < 1) throw std::invalid_argument("gauss_legendre: n must be >= 1");
  // The roots of the Legendre polynomial P_n on [-1, 1] by Newton's method from the usual first
  // guesses, P_n and its derivative from the three-term recurrence; then mapped to [0, 1].
  Quadrature q;
  q.nodes.resize(static_cast<std::size_t>(n));
  q.weights.resize(static_cast<std::size_t>(n));
  const double pi = std::acos(-1.0);
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double x = std::cos(pi * (i + 0.75) / (n + 0.5)), derivative = 0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p = 1, previous = 0;  // P_j(x), P_{j-1}(x)
      for (int j = 1; j <= n; ++j) {
        const double next = ((2.0 * j - 1) * x * p - (j - 1.0) * previous) / j;
        previous = p;
        p = next;
      }
      derivative = n * (x * p - previous) / (x * x - 1);
      const double step = p / derivative;
      x -= step;
      if (std::abs(step) < 1e-15) break;
    }
    const double w = 2 / ((1 - x * x) * derivative * derivative);
    // x is the i-th largest root; -x the i-th smallest. On [0, 1]: (1 +- x) / 2, weight w / 2.
    q.nodes[static_cast<std::size_t>(i)] = (1 - x) / 2;
    q.nodes[static_cast<std::size_t>(n - 1 - i)] = (1 + x) / 2;
    q.weights[static_cast<std::size_t>(i)] = q.weights[static_cast<std::size_t>(n - 1 - i)] = w / 2;
  }
  return q;
}

torch::Tensor GradientScores::completeness_gap() const {
  if (!integrated.defined()) return {};
  return integrated.sum(-1) - (at_input - at_baseline);
}

GradientScores gradient_scores(const Targets& f, const torch::Tensor& x, const torch::Tensor& baseline, std::int64_t targets,
                               const GradientOptions& options) {
  TORCH_CHECK(x.dim() == 3 && x.sizes() == baseline.sizes(), "gradient_scores: x and baseline must be [B, T, E] alike");
  TORCH_CHECK(targets >= 1 && options.steps >= 0 && options.budget >= 1, "gradient_scores: bad targets, steps or budget");
  const std::int64_t B = x.size(0), T = x.size(1), K = targets;
  GradientScores out;
  if (!options.gradient && options.steps == 0) return out;
  const torch::Tensor diff = (x - baseline).to(torch::kFloat32).detach();
  const torch::Tensor base = baseline.to(torch::kFloat32).detach();
  // The points to differentiate at, as (alpha, weight, accumulator): the input itself (alpha 1) for
  // the plain gradient, and each quadrature node for integrated gradients.
  struct Point {
    double alpha, weight;
    int into;  // 0: the gradient at x; 1: integrated gradients
  };
  std::vector<Point> points;
  if (options.gradient) points.push_back({1.0, 1.0, 0});
  if (options.steps > 0) {
    const Quadrature q = gauss_legendre(options.steps);
    for (std::size_t s = 0; s < q.nodes.size(); ++s) points.push_back({q.nodes[s], q.weights[s], 1});
  }
  torch::Tensor sums[2];
  if (options.gradient) sums[0] = torch::zeros({B * K, T, x.size(2)});
  if (options.steps > 0) sums[1] = torch::zeros({B * K, T, x.size(2)});
  // Every (point, input) pair is one row of some forward pass: input b at point p. A pass takes as
  // many pairs as the budget allows; then one backward pass per target k of sum_c z_k(x_c), the
  // graph kept between them, gives each row's gradient of z_k (the rows do not interact). attn's
  // kernels keep what their forward passes save for that (nn::RepeatableBackward).
  const std::int64_t pairs = static_cast<std::int64_t>(points.size()) * B;
  const std::int64_t per_pass = std::max<std::int64_t>(1, options.budget / std::max<std::int64_t>(1, T));
  torch::AutoGradMode grad_on(true);
  const nn::RepeatableBackward repeatable;
  for (std::int64_t first = 0; first < pairs; first += per_pass) {
    const std::int64_t n = std::min(per_pass, pairs - first);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
    std::vector<float> alpha(static_cast<std::size_t>(n)), weight(static_cast<std::size_t>(n));
    std::vector<std::int64_t> mine[2];  // the pass's rows that go to each sum
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t c = first + i;
      const Point& p = points[static_cast<std::size_t>(c / B)];
      rows[static_cast<std::size_t>(i)] = c % B;
      alpha[static_cast<std::size_t>(i)] = static_cast<float>(p.alpha);
      weight[static_cast<std::size_t>(i)] = static_cast<float>(p.weight);
      mine[p.into].push_back(i);
    }
    const torch::Tensor row_index = torch::tensor(rows, torch::kInt64);
    const torch::Tensor a = torch::tensor(alpha).view({n, 1, 1}), w = torch::tensor(weight).view({n, 1, 1});
    const torch::Tensor point = (base.index_select(0, row_index) + a * diff.index_select(0, row_index)).requires_grad_(true);
    const torch::Tensor z = f(point, row_index);
    TORCH_CHECK(z.dim() == 2 && z.size(0) == n && z.size(1) == K, "gradient_scores: the model gave targets of shape ", z.sizes(),
                ", expected [", n, ", ", K, "]");
    for (std::int64_t k = 0; k < K; ++k) {
      const torch::Tensor g = torch::autograd::grad({z.select(1, k).sum()}, {point}, {}, /*retain_graph=*/k + 1 < K)[0].detach() * w;
      const torch::Tensor slot = row_index * K + k;
      for (int s = 0; s < 2; ++s) {
        if (mine[s].empty()) continue;
        if (static_cast<std::int64_t>(mine[s].size()) == n) {
          sums[s].index_add_(0, slot, g);
        } else {  // the pass that holds the last of the plain gradient's pairs and the first of the quadrature's
          const torch::Tensor pick = torch::tensor(mine[s], torch::kInt64);
          sums[s].index_add_(0, slot.index_select(0, pick), g.index_select(0, pick));
        }
      }
    }
  }
  torch::NoGradGuard no_grad;
  const torch::Tensor diff_k = diff.unsqueeze(1);  // [B, 1, T, E]
  if (options.gradient) {
    const torch::Tensor g = sums[0].view({B, K, T, -1});
    out.gradient = g.norm(2, -1);
    out.grad_input = (g * diff_k).sum(-1);
  }
  if (options.steps > 0) {
    out.integrated = (sums[1].view({B, K, T, -1}) * diff_k).sum(-1);
    const torch::Tensor rows = torch::arange(B, torch::kInt64);
    out.at_input = f(x.to(torch::kFloat32), rows).detach();
    out.at_baseline = f(base, rows).detach();
  }
  return out;
}

std::vector<std::vector<float>> leave_one_out(const VersionScores& score, const std::vector<std::int64_t>& units, std::int64_t targets,
                                              std::vector<std::vector<float>>* probabilities) {
  // Each input whole, then once without each of its units: one call for all of them.
  std::vector<Version> versions;
  for (std::size_t b = 0; b < units.size(); ++b) {
    const auto n = static_cast<std::size_t>(units[b]);
    versions.push_back({static_cast<std::int64_t>(b), std::vector<std::uint8_t>(n, 1)});
    for (std::size_t t = 0; t < n; ++t) {
      versions.push_back({static_cast<std::int64_t>(b), std::vector<std::uint8_t>(n, 1)});
      versions.back().keep[t] = 0;
    }
  }
  const std::vector<float> p = score(versions);
  const auto K = static_cast<std::size_t>(targets);
  if (p.size() != versions.size() * K) throw std::logic_error("leave_one_out: the scorer gave the wrong number of probabilities");
  std::vector<std::vector<float>> out(units.size());
  if (probabilities) probabilities->assign(units.size(), {});
  std::size_t v = 0;
  for (std::size_t b = 0; b < units.size(); ++b) {
    const auto n = static_cast<std::size_t>(units[b]);
    const float* whole = p.data() + v * K;
    if (probabilities) (*probabilities)[b].assign(whole, whole + K);
    out[b].assign(K * n, 0.0f);
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t k = 0; k < K; ++k) out[b][k * n + t] = whole[k] - p[(v + 1 + t) * K + k];
    v += 1 + n;
  }
  return out;
}

std::vector<float> attention_rollout(const std::vector<torch::Tensor>& layers, const torch::Tensor& pooling) {
  torch::NoGradGuard no_grad;
  const std::int64_t T = pooling.numel();
  torch::Tensor rollout = torch::eye(T, torch::kFloat32);
  for (const torch::Tensor& w : layers) {
    TORCH_CHECK(w.dim() == 3 && w.size(1) == T && w.size(2) == T, "attention_rollout: a layer's weights must be [heads, T, T]");
    torch::Tensor a = 0.5 * w.to(torch::kFloat32).mean(0) + 0.5 * torch::eye(T, torch::kFloat32);  // the residual stream
    a = a / a.sum(-1, true).clamp_min(1e-12);
    rollout = torch::mm(a, rollout);  // layer l's outputs as mixtures of the inputs
  }
  const torch::Tensor scores = torch::mv(rollout.t(), pooling.to(torch::kFloat32).reshape({T})).contiguous();
  return {scores.data_ptr<float>(), scores.data_ptr<float>() + T};
}

}  // namespace attn::models
