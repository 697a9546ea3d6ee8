// feature-attention (seed 001) against its equation.
#include <map>

#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("feature-attention: the seed's 121 parameters, weights over features sum to 1", "[models][features]") {
  torch::jit::Module m = build("feature-attention", {{"features", 10}});
  CHECK(parameter_count(m) == 121);
  const torch::Tensor x = torch::randn({5, 10});
  const auto [p, alpha] = pair_of(m.forward({x}));
  CHECK(p.sizes() == torch::IntArrayRef({5, 1}));
  CHECK(alpha.sizes() == torch::IntArrayRef({5, 10}));
  CHECK(torch::allclose(alpha.sum(1), torch::ones({5})));
  // The equation, by hand: p = sigmoid(w . (softmax(W x + b) * x) + c)
  const auto params = m.named_parameters(true);
  std::map<std::string, torch::Tensor> w;
  for (const auto& q : params) w[q.name] = q.value;
  const torch::Tensor a = torch::softmax(torch::matmul(x, w["attention.attention.weight"].t()) + w["attention.attention.bias"], 1);
  const torch::Tensor expected = torch::sigmoid(torch::matmul(a * x, w["output.weight"].t()) + w["output.bias"]);
  CHECK(torch::allclose(p, expected, 1e-5, 1e-6));
  torch::jit::Module deep = build("feature-attention", {{"features", 4}, {"hidden", {8, 3}}});
  CHECK(parameter_count(deep) == 4 * 4 + 4 + 4 * 8 + 8 + 8 * 3 + 3 + 3 + 1);
}
