#include "attn/nn/script_module.h"

#include <cmath>

#include <torch/torch.h>

namespace attn::nn {

std::vector<std::pair<std::string, Tensor>> ScriptModule::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) out.emplace_back(p.name, p.value);
  return out;
}

std::vector<Tensor> ScriptModule::parameters() const {
  std::vector<Tensor> out;
  for (const auto& p : module_.parameters(/*recurse=*/true)) out.push_back(p);
  return out;
}

c10::IValue ScriptModule::call(std::vector<c10::IValue> inputs) const { return module_.forward(std::move(inputs)); }

std::tuple<Tensor, Tensor> ScriptModule::pair(const c10::IValue& v) {
  const auto t = v.toTuple();
  return {t->elements()[0].toTensor(), t->elements()[1].toTensor()};
}

namespace script {

// The one masking rule of the library, compiled into every attention module that masks
// (modules built this way share no free functions).
static const char* kMaskedSoftmax = R"(
def masked_softmax(self, scores: Tensor, mask: Optional[Tensor]) -> Tensor:
    # softmax over the last dimension, restricted to positions where mask is True (mask broadcasts
    # against scores). Masked positions get exactly 0; a fully masked row is all 0, never NaN.
    if mask is None:
        return torch.softmax(scores, -1)
    keep = mask != 0
    weights = torch.softmax(scores.masked_fill(torch.logical_not(keep), float("-inf")), -1)
    return weights.masked_fill(torch.logical_not(keep), 0.0)
)";

torch::jit::Module new_module(const std::string& class_name) {
  torch::jit::Module m(c10::QualifiedName("attn." + class_name));
  m.register_attribute("training", c10::BoolType::get(), true);
  return m;
}

void add_parameter(torch::jit::Module& m, const std::string& name, Tensor value) {
  value.set_requires_grad(true);
  m.register_parameter(name, std::move(value), /*is_buffer=*/false);
}

void define(torch::jit::Module& m, const std::string& source, const std::string& what, bool masked_softmax) {
  try {
    m.define(masked_softmax ? std::string(kMaskedSoftmax) + source : source);
  } catch (const c10::Error& e) {
    throw std::runtime_error("internal error compiling the TorchScript of " + what + ": " + e.what_without_backtrace());
  }
}

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

torch::jit::Module bilstm(std::int64_t input_size, std::int64_t hidden_size, double recurrent_dropout) {
  TORCH_CHECK(recurrent_dropout >= 0 && recurrent_dropout < 1, "BiLSTM: recurrent_dropout must be in [0, 1)");
  auto m = new_module("BiLSTM");
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));  // torch.nn.LSTM's init
  torch::NoGradGuard no_grad;
  for (const char* suffix : {"_l0", "_l0_reverse"}) {
    const std::string s = suffix;
    add_parameter(m, "weight_ih" + s, torch::empty({4 * hidden_size, input_size}).uniform_(-bound, bound));
    add_parameter(m, "weight_hh" + s, torch::empty({4 * hidden_size, hidden_size}).uniform_(-bound, bound));
    add_parameter(m, "bias_ih" + s, torch::empty({4 * hidden_size}).uniform_(-bound, bound));
    add_parameter(m, "bias_hh" + s, torch::empty({4 * hidden_size}).uniform_(-bound, bound));
  }
  m.register_attribute("hidden_size", c10::IntType::get(), hidden_size);
  m.register_attribute("recurrent_dropout", c10::FloatType::get(), recurrent_dropout);
  define(m, R"(
def forward(self, x: Tensor) -> Tensor:
    # x [B, T, I] -> [B, T, 2H]; DropConnect on the recurrent weights while training
    w_hh = torch.dropout(self.weight_hh_l0, self.recurrent_dropout, self.training)
    w_hh_reverse = torch.dropout(self.weight_hh_l0_reverse, self.recurrent_dropout, self.training)
    params = [self.weight_ih_l0, w_hh, self.bias_ih_l0, self.bias_hh_l0,
              self.weight_ih_l0_reverse, w_hh_reverse, self.bias_ih_l0_reverse, self.bias_hh_l0_reverse]
    h0 = torch.zeros([2, x.size(0), self.hidden_size], dtype=x.dtype, device=x.device)
    out, h_n, c_n = torch.lstm(x, [h0, h0], params, True, 1, 0.0, self.training, True, True)
    return out

def forward_lengths(self, x: Tensor, lengths: Tensor) -> Tensor:
    # post-padded x [B, T, I] whose row b is real on its first lengths[b] steps -> [B, T, 2H].
    # Each direction reads a row's real steps before its padding (the backward one reads them
    # reversed), so the outputs at real steps do not depend on the padding after them, as with
    # pack_padded_sequence, but on the fused kernel.
    w_hh = torch.dropout(self.weight_hh_l0, self.recurrent_dropout, self.training)
    w_hh_reverse = torch.dropout(self.weight_hh_l0_reverse, self.recurrent_dropout, self.training)
    h0 = torch.zeros([1, x.size(0), self.hidden_size], dtype=x.dtype, device=x.device)
    forward, h_n, c_n = torch.lstm(x, [h0, h0], [self.weight_ih_l0, w_hh, self.bias_ih_l0, self.bias_hh_l0],
                                   True, 1, 0.0, self.training, False, True)
    steps = torch.arange(x.size(1), device=x.device).unsqueeze(0)     # [1, T]
    n = lengths.unsqueeze(1)                                          # [B, 1]
    reverse = torch.where(steps < n, n - 1 - steps, steps)            # row-wise reversal of the real steps
    x_reversed = x.gather(1, reverse.unsqueeze(-1).expand(-1, -1, x.size(2)))
    backward, h_n, c_n = torch.lstm(x_reversed, [h0, h0], [self.weight_ih_l0_reverse, w_hh_reverse,
                                    self.bias_ih_l0_reverse, self.bias_hh_l0_reverse],
                                    True, 1, 0.0, self.training, False, True)
    backward = backward.gather(1, reverse.unsqueeze(-1).expand(-1, -1, self.hidden_size))
    return torch.cat([forward, backward], -1)

def forward_masked(self, x: Tensor, mask: Tensor) -> Tensor:
    # x [B, T, I], mask [B, T] true on the real steps, wherever the padding is (pre or post)
    # -> [B, T, 2H], zeros at padding. The real steps, in order, go first (a stable sort), run
    # through forward_lengths, and are put back.
    _, order = torch.sort(mask.to(x.dtype), stable=True, dim=1, descending=True)
    x_sorted = x.gather(1, order.unsqueeze(-1).expand(-1, -1, x.size(2)))
    h_sorted = self.forward_lengths(x_sorted, mask.sum(1))
    back = torch.argsort(order, dim=1)
    h = h_sorted.gather(1, back.unsqueeze(-1).expand(-1, -1, h_sorted.size(2)))
    return h * mask.unsqueeze(-1).to(h.dtype)
)",
         "BiLSTM");
  return m;
}

}  // namespace script
}  // namespace attn::nn
