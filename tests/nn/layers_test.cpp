// Basic layers as TorchScript modules: torch.nn's parameter names, initialisation and equations.
#include <cmath>
#include <map>

#include "attn/nn/layers.h"
#include "nn_test_util.h"

using namespace attn::nn;
using nn_test::max_diff;
using torch::Tensor;

namespace {
std::map<std::string, Tensor> parameters_by_name(const torch::jit::Module& m) {
  std::map<std::string, Tensor> out;
  for (const auto& p : m.named_parameters(false)) out[p.name] = p.value;
  return out;
}
}  // namespace

TEST_CASE("linear: torch.nn.Linear's parameters and initialisation, y = x W^T + b", "[nn][layers]") {
  torch::manual_seed(4);
  torch::jit::Module m = script::linear(25, 3);
  auto p = parameters_by_name(m);
  REQUIRE(p.size() == 2);
  CHECK(p.at("weight").sizes() == torch::IntArrayRef{3, 25});
  CHECK(p.at("bias").sizes() == torch::IntArrayRef{3});
  for (const auto& [name, t] : p) CHECK(t.abs().max().item<double>() <= 1.0 / std::sqrt(25.0));  // U(-1/sqrt(in), 1/sqrt(in))
  CHECK(p.at("weight").abs().max().item<double>() > 0.1);
  const Tensor x = torch::randn({2, 4, 25});
  const Tensor y = m.forward({x}).toTensor();
  CHECK(max_diff(y, torch::matmul(x, p.at("weight").t()) + p.at("bias")) < 1e-5);

  torch::jit::Module no_bias = script::linear(25, 3, false);
  p = parameters_by_name(no_bias);
  REQUIRE(p.size() == 1);
  CHECK(max_diff(no_bias.forward({x}).toTensor(), torch::matmul(x, p.at("weight").t())) < 1e-5);
}

TEST_CASE("layer_norm: weight 1 and bias 0, (x - mean) / sqrt(var + eps) over the last dimension", "[nn][layers]") {
  torch::manual_seed(5);
  torch::jit::Module m = script::layer_norm(6, 1e-3);
  const auto p = parameters_by_name(m);
  CHECK(torch::equal(p.at("weight"), torch::ones({6})));
  CHECK(torch::equal(p.at("bias"), torch::zeros({6})));
  const Tensor x = torch::randn({3, 2, 6}).mul(4).add(1);
  const Tensor mean = x.mean(-1, true), var = (x - mean).pow(2).mean(-1, true);
  CHECK(max_diff(m.forward({x}).toTensor(), (x - mean) / torch::sqrt(var + 1e-3)) < 1e-5);
}
