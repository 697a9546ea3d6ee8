#pragma once
// Helpers for the nn tests: parameter access, independent reference formulas, finite differences.
#include <functional>
#include <string>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "attn/nn/script_module.h"

namespace nn_test {

using torch::Tensor;

/// LibTorch's intra-op thread count for the guard's lifetime.
class ThreadsGuard {
 public:
  explicit ThreadsGuard(int threads) : before_(torch::get_num_threads()) { torch::set_num_threads(threads); }
  ~ThreadsGuard() { torch::set_num_threads(before_); }
  ThreadsGuard(const ThreadsGuard&) = delete;
  ThreadsGuard& operator=(const ThreadsGuard&) = delete;

 private:
  int before_;
};

inline double max_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

/// The parameter called `name` (e.g. "mlp.weight"); fails the test if there is none.
inline Tensor param(const attn::nn::ScriptModule& m, const std::string& name) {
  for (const auto& [n, t] : m.named_parameters())
    if (n == name) return t;
  FAIL("no parameter " << name);
  return {};
}

/// Copies `value` into parameter `name` (shapes must match).
inline void set_param(const attn::nn::ScriptModule& m, const std::string& name, const Tensor& value) {
  torch::NoGradGuard no_grad;
  Tensor p = param(m, name);
  REQUIRE(p.sizes() == value.sizes());
  p.copy_(value);
}

/// Softmax over the last dim restricted to `mask` (true = keep), computed independently of the
/// library: exp of the shifted scores, zeroed where masked, divided by the row sum.
inline Tensor reference_masked_softmax(const Tensor& scores, const Tensor& mask) {
  const Tensor keep = mask.to(torch::kBool);
  const Tensor shifted = scores - std::get<0>(scores.max(-1, true));
  const Tensor e = torch::exp(shifted) * keep.to(scores.dtype());
  return e / e.sum(-1, true);
}

/// Central-difference check of d loss / d x for every tensor in `wrt` (double precision).
/// `loss` must recompute from the current values of `wrt`.
inline void check_gradients(const std::function<Tensor()>& loss, const std::vector<Tensor>& wrt, double eps = 1e-6, double tol = 1e-6) {
  const auto grads = torch::autograd::grad({loss()}, wrt);
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    REQUIRE(wrt[i].scalar_type() == torch::kDouble);
    Tensor flat = wrt[i].detach().view(-1);  // shares storage with wrt[i]
    const Tensor g = grads[i].reshape(-1);
    const std::int64_t n = flat.numel();
    const std::int64_t step = std::max<std::int64_t>(1, n / 25);  // at most ~25 entries per tensor
    for (std::int64_t j = 0; j < n; j += step) {
      const double orig = flat[j].item<double>();
      double plus, minus;
      {
        torch::NoGradGuard no_grad;
        flat[j] = orig + eps;
        plus = loss().item<double>();
        flat[j] = orig - eps;
        minus = loss().item<double>();
        flat[j] = orig;
      }
      const double numeric = (plus - minus) / (2 * eps);
      INFO("tensor " << i << " entry " << j);
      CHECK(std::abs(numeric - g[j].item<double>()) <= tol * std::max(1.0, std::abs(numeric)));
    }
  }
}

/// A scalar that depends on every output element: sum(out * r) with fixed random r.
inline Tensor probe_sum(const Tensor& out, std::uint64_t seed) {
  torch::manual_seed(seed);
  const Tensor r = torch::randn(out.sizes(), out.options().requires_grad(false));
  return (out * r).sum();
}

}  // namespace nn_test
