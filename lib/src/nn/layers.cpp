// Basic layers as TorchScript modules, with PyTorch's parameter names and initialisation.
#include "attn/nn/layers.h"

#include <cmath>

#include <torch/script.h>

namespace attn::nn::script {

torch::jit::Module linear(std::int64_t in_features, std::int64_t out_features, bool bias) {
  auto m = new_module(bias ? "Linear" : "LinearNoBias");
  // PyTorch's default: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias.
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  torch::NoGradGuard no_grad;
  add_parameter(m, "weight", torch::empty({out_features, in_features}).uniform_(-bound, bound));
  if (bias) add_parameter(m, "bias", torch::empty({out_features}).uniform_(-bound, bound));
  define(m,
         bias ? "def forward(self, x: Tensor) -> Tensor:\n    return torch.linear(x, self.weight, self.bias)\n"
              : "def forward(self, x: Tensor) -> Tensor:\n    return torch.linear(x, self.weight)\n",
         "Linear");
  return m;
}

torch::jit::Module layer_norm(std::int64_t dim, double eps) {
  auto m = new_module("LayerNorm");
  add_parameter(m, "weight", torch::ones({dim}));
  add_parameter(m, "bias", torch::zeros({dim}));
  m.register_attribute("normalized_shape", c10::ListType::ofInts(), c10::List<std::int64_t>({dim}));
  m.register_attribute("eps", c10::FloatType::get(), eps);
  define(m, R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
)",
         "LayerNorm");
  return m;
}

}  // namespace attn::nn::script
