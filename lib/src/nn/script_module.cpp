#include "attn/nn/script_module.h"

#include <stdexcept>

#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/script.h>

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

void require_config(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
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

namespace {

/// Names in attn's TorchScript source: `torch` (PyTorch's operators, as everywhere) and `attn`
/// (attn's own operators, e.g. attn.bilstm_masked: native builds only, see nn::Runtime).
struct Resolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction&,
                                                         const torch::jit::SourceRange&) override {
    if (name == "torch") return std::make_shared<torch::jit::BuiltinModule>("aten");
    if (name == "attn") return std::make_shared<torch::jit::BuiltinModule>("attn");
    return nullptr;
  }
  c10::TypePtr resolveType(const std::string&, const torch::jit::SourceRange&) override { return nullptr; }
};

}  // namespace

void define(torch::jit::Module& m, const std::string& source, const std::string& what, bool masked_softmax) {
  try {
    m.define(masked_softmax ? std::string(kMaskedSoftmax) + source : source, std::make_shared<Resolver>());
  } catch (const c10::Error& e) {
    throw std::runtime_error("internal error compiling the TorchScript of " + what + ": " + e.what_without_backtrace());
  }
}

}  // namespace script
}  // namespace attn::nn
