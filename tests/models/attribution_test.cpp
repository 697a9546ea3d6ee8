// The importance methods' machinery on functions whose answers are known in closed form: the
// quadrature, gradients in batched passes of any budget, integrated gradients' exactness and
// completeness, leave-one-out, attention rollout.
#include <cmath>

#include <torch/script.h>
#include <catch2/catch.hpp>

#include "attn/models/attribution.h"

using namespace attn;

namespace {

/// Two targets of x [N, T, E]: z0 = (row + 1) sum a x^2, z1 = (sum c x)^3, the row taken from `rows`.
struct Cubic {
  torch::Tensor a, c;
  torch::Tensor operator()(const torch::Tensor& x, const torch::Tensor& rows) const {
    const torch::Tensor scale = (rows.to(torch::kFloat32) + 1).view({-1});
    const torch::Tensor z0 = scale * (a * x * x).sum({1, 2});
    const torch::Tensor z1 = (c * x).sum({1, 2}).pow(3);
    return torch::stack({z0, z1}, 1);
  }
};

}  // namespace

TEST_CASE("Gauss-Legendre on [0, 1]: known nodes and weights, exact up to degree 2n - 1", "[models][attribution]") {
  const auto one = models::gauss_legendre(1);
  CHECK(one.nodes == std::vector<double>{0.5});
  CHECK(one.weights == std::vector<double>{1.0});
  const auto three = models::gauss_legendre(3);
  CHECK(three.nodes[0] == Approx(0.5 - 0.5 * std::sqrt(0.6)).epsilon(1e-14));
  CHECK(three.nodes[1] == Approx(0.5).epsilon(1e-14));
  CHECK(three.weights[0] == Approx(5.0 / 18).epsilon(1e-14));
  CHECK(three.weights[1] == Approx(4.0 / 9).epsilon(1e-14));
  for (int n : {2, 5, 50, 64}) {
    const auto q = models::gauss_legendre(n);
    double sum = 0, top = 0;
    for (int s = 0; s < n; ++s) {
      sum += q.weights[static_cast<std::size_t>(s)];
      top += q.weights[static_cast<std::size_t>(s)] * std::pow(q.nodes[static_cast<std::size_t>(s)], 2 * n - 1);
      if (s) CHECK(q.nodes[static_cast<std::size_t>(s)] > q.nodes[static_cast<std::size_t>(s) - 1]);
    }
    CHECK(sum == Approx(1.0).epsilon(1e-12));
    CHECK(top == Approx(1.0 / (2 * n)).epsilon(1e-10));  // the integral of t^(2n-1) on [0, 1]
  }
  CHECK_THROWS_AS(models::gauss_legendre(0), std::invalid_argument);
}

TEST_CASE("gradient, grad-input and integrated gradients of known functions, in passes of any budget", "[models][attribution]") {
  torch::manual_seed(1);
  const std::int64_t B = 3, T = 4, E = 5;
  const Cubic f{torch::rand({1, T, E}), torch::randn({1, T, E}) * 0.3};
  const torch::Tensor x = torch::randn({B, T, E}), zero = torch::zeros_like(x);
  models::GradientOptions o;
  o.gradient = true;
  o.steps = 2;  // z0's path integrand is degree 1 and z1's degree 2 in alpha: 2 nodes are exact
  const auto g = models::gradient_scores(f, x, zero, 2, o);
  REQUIRE(g.gradient.sizes() == torch::IntArrayRef({B, 2, T}));
  const torch::Tensor rows = torch::arange(B).to(torch::kFloat32).view({B, 1, 1}) + 1;
  const torch::Tensor d0 = 2 * rows * f.a * x;  // dz0/dx
  const torch::Tensor cx = (f.c * x).sum({1, 2}).view({B, 1, 1});
  const torch::Tensor d1 = 3 * cx * cx * f.c;  // dz1/dx
  CHECK(torch::allclose(g.gradient.select(1, 0), d0.norm(2, -1), 1e-4, 1e-5));
  CHECK(torch::allclose(g.gradient.select(1, 1), d1.norm(2, -1), 1e-4, 1e-5));
  CHECK(torch::allclose(g.grad_input.select(1, 0), (d0 * x).sum(-1), 1e-4, 1e-5));
  CHECK(torch::allclose(g.grad_input.select(1, 1), (d1 * x).sum(-1), 1e-4, 1e-5));
  // Exact integrated gradients: z0 = s a x^2 gives s a x^2 per unit; z1 = (c x)^3 gives c x (c x)^2.
  CHECK(torch::allclose(g.integrated.select(1, 0), (rows * f.a * x * x).sum(-1), 1e-4, 1e-5));
  CHECK(torch::allclose(g.integrated.select(1, 1), (f.c * x * cx * cx).sum(-1), 1e-4, 1e-5));
  // Completeness: the scores add up to z(x) - z(baseline).
  CHECK(g.completeness_gap().abs().max().item<float>() < 1e-4);
  // Any budget (here one row of one target per pass) gives the same scores.
  o.budget = 1;
  const auto small = models::gradient_scores(f, x, zero, 2, o);
  CHECK(torch::allclose(small.integrated, g.integrated, 1e-5, 1e-6));
  CHECK(torch::allclose(small.gradient, g.gradient, 1e-5, 1e-6));
  // One step is not exact for the cubic: the gap says so.
  o.steps = 1;
  o.gradient = false;
  const auto coarse = models::gradient_scores(f, x, zero, 2, o);
  CHECK_FALSE(coarse.gradient.defined());
  CHECK(coarse.completeness_gap().select(1, 1).abs().max().item<float>() > 1e-3);
  CHECK(coarse.completeness_gap().select(1, 0).abs().max().item<float>() < 1e-4);  // the quadratic still is
}

TEST_CASE("grad-input and integrated gradients against a baseline measure x - baseline", "[models][attribution]") {
  torch::manual_seed(2);
  const Cubic f{torch::rand({1, 3, 1}), torch::zeros({1, 3, 1})};
  const torch::Tensor x = torch::randn({2, 3, 1}), b = torch::randn({2, 3, 1});
  models::GradientOptions o;
  o.steps = 3;
  const auto g = models::gradient_scores(f, x, b, 2, o);
  // z0 = s a x^2 from b to x: s a (x^2 - b^2) per unit, exactly.
  const torch::Tensor s = torch::arange(2).to(torch::kFloat32).view({2, 1, 1}) + 1;
  CHECK(torch::allclose(g.integrated.select(1, 0), (s * f.a * (x * x - b * b)).sum(-1), 1e-4, 1e-5));
  CHECK(g.completeness_gap().abs().max().item<float>() < 1e-4);
}

TEST_CASE("leave-one-out: p(x) minus p without each unit, every version scored in one call", "[models][attribution]") {
  const std::vector<std::vector<float>> w = {{0.1f, 0.2f, 0.3f}, {0.5f, -0.25f}};
  int calls = 0;
  const auto score = [&](const std::vector<models::Version>& versions) {
    ++calls;
    std::vector<float> p;
    for (const auto& v : versions) {
      float kept = 0;
      for (std::size_t t = 0; t < v.keep.size(); ++t) kept += v.keep[t] ? w[static_cast<std::size_t>(v.row)][t] : 0;
      p.push_back(kept);
      p.push_back(2 * kept);
    }
    return p;
  };
  std::vector<std::vector<float>> whole;
  const auto loo = models::leave_one_out(score, {3, 2}, 2, &whole);
  CHECK(calls == 1);
  const std::vector<float> want = {0.1f, 0.2f, 0.3f, 0.2f, 0.4f, 0.6f};
  REQUIRE(loo[0].size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(loo[0][i] == Approx(want[i]));
  CHECK(loo[1][0] == Approx(0.5f));
  CHECK(loo[1][1] == Approx(-0.25f));
  CHECK(loo[1][3] == Approx(-0.5f));
  CHECK(whole[1][0] == Approx(0.25f));
}

TEST_CASE("attention rollout: the residual mix of each layer, rolled from the inputs, read by the pooling", "[models][attribution]") {
  // One layer, one head: A = 0.5 W + 0.5 I = [[1, 0], [0.25, 0.75]]; scores = A^T [0.5, 0.5].
  const torch::Tensor w = torch::tensor({1.0f, 0.0f, 0.5f, 0.5f}).view({1, 2, 2});
  const auto one = models::attention_rollout({w}, torch::tensor({0.5f, 0.5f}));
  CHECK(one[0] == Approx(0.625f));
  CHECK(one[1] == Approx(0.375f));
  // Two layers multiply: A^2 = [[1, 0], [0.4375, 0.5625]]; scores = (A^2)^T [0.2, 0.8].
  const auto two = models::attention_rollout({w, w}, torch::tensor({0.2f, 0.8f}));
  CHECK(two[0] == Approx(0.55f));
  CHECK(two[1] == Approx(0.45f));
}
