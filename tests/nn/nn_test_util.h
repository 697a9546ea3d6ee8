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

/// One direction's weights of a recurrent layer of `gates` gates (3: GRU, 4: LSTM), shaped and named
/// as torch's (weight_ih [gates H, I], weight_hh [gates H, H], bias_ih, bias_hh [gates H]), uniform in
/// [-0.4, 0.4) and requiring gradients.
template <class Weights>
Weights random_direction(std::int64_t gates, std::int64_t input, std::int64_t hidden) {
  const auto u = [](std::vector<std::int64_t> shape) { return (torch::rand(shape) * 0.8 - 0.4).requires_grad_(); };
  return {u({gates * hidden, input}), u({gates * hidden, hidden}), u({gates * hidden}), u({gates * hidden})};
}

/// The same weights, constant (detached): the importance methods' case, x's gradient only.
template <class Weights>
Weights constant_direction(const Weights& w) {
  return {w.weight_ih.detach(), w.weight_hh.detach(), w.bias_ih.detach(), w.bias_hh.detach()};
}

/// A bidirectional kernel's eight weights in its operator's order: forward, then backward direction.
template <class Weights>
std::vector<Tensor> both_directions(const Weights& f, const Weights& b) {
  return {f.weight_ih, f.weight_hh, f.bias_ih, f.bias_hh, b.weight_ih, b.weight_hh, b.bias_ih, b.bias_hh};
}

/// A kernel's input [B, T, I] requiring gradients: every row drawn apart, or (`repeats`) each a copy
/// of one of 6 rows, as words of a small vocabulary are (a kernel projects repeated rows once).
inline Tensor kernel_input(std::int64_t B, std::int64_t T, std::int64_t I, bool repeats) {
  const Tensor x = repeats ? torch::randn({6, I}).index_select(0, torch::randint(0, 6, {B * T})).view({B, T, I}) : torch::randn({B, T, I});
  return x.requires_grad_();
}

/// x and the eight weights: what a bidirectional kernel's gradients are checked with respect to.
template <class Weights>
std::vector<Tensor> kernel_inputs(const Tensor& x, const Weights& f, const Weights& b) {
  std::vector<Tensor> out{x};
  for (const Tensor& w : both_directions(f, b)) out.push_back(w);
  return out;
}

/// A TorchScript module whose forward(x, second, w) calls the operator attn::`op`(x, second, w[0],
/// ..., w[7]): a bidirectional kernel called as saved models call it (`second`: lengths or mask).
inline torch::jit::Module kernel_module(const std::string& op, const std::string& second) {
  torch::jit::Module m = attn::nn::script::new_module("M");
  attn::nn::script::define(m,
                           "def forward(self, x: Tensor, " + second +
                               ": Tensor, w: List[Tensor]) -> Tensor:\n"
                               "    return attn." +
                               op + "(x, " + second + ", w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])\n",
                           "a test module");
  return m;
}

/// Gradients of sum(out * probe) for a kernel's output `ours` and its definition's `expected`, with
/// respect to `inputs`, checked equal to float rounding; returns {ours', expected's}. `keep_graph`:
/// ours's graph stays for another backward pass.
inline std::pair<std::vector<Tensor>, std::vector<Tensor>> check_same_gradients(const Tensor& ours, const Tensor& expected,
                                                                                const std::vector<Tensor>& inputs, const Tensor& probe,
                                                                                bool keep_graph = false) {
  const auto g_ours = torch::autograd::grad({(ours * probe).sum()}, inputs, {}, keep_graph);
  const auto g_expected = torch::autograd::grad({(expected * probe).sum()}, inputs);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    INFO("gradient " << k);
    CHECK(torch::allclose(g_ours[k], g_expected[k], 1e-4, 1e-5));
  }
  return {g_ours, g_expected};
}

}  // namespace nn_test
