#pragma once
/// attn's modules are TorchScript modules built from source in C++ (torch::jit::Module::define):
/// one definition per module, the TorchScript source beside its builder, and the same object
/// trains in C++, saves with save(), and loads in Python (`torch.jit.load`) or C++
/// (`torch::jit::load`). ScriptModule is the typed C++ handle every module derives from.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <torch/script.h>
#include <torch/types.h>

namespace attn::nn {

using torch::Tensor;

/// An optional tensor argument (a mask): {} or a tensor.
using OptionalTensor = c10::optional<Tensor>;

class ScriptModule {
 public:
  /// The underlying TorchScript module (for saving, parameters, or calling methods by name).
  torch::jit::Module& module() { return module_; }
  const torch::jit::Module& module() const { return module_; }

  /// Training mode (dropout on) or evaluation mode, for this module and its submodules.
  void train(bool on = true) { module_.train(on); }
  void eval() { module_.eval(); }
  bool is_training() const { return module_.is_training(); }

  /// Parameters (requires_grad) with their dotted names, e.g. "self_attn.q_proj.weight".
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  /// Casts parameters and buffers (e.g. to torch::kDouble for gradient checks).
  void to(torch::Dtype dtype) { module_.to(dtype); }
  /// Writes the TorchScript file; Python's torch.jit.load and C++'s torch::jit::load read it.
  void save(const std::string& path) const { module_.save(path); }

 protected:
  explicit ScriptModule(torch::jit::Module module) : module_(std::move(module)) {}
  /// Calls forward with `inputs`; an absent optional tensor becomes None.
  c10::IValue call(std::vector<c10::IValue> inputs) const;
  static c10::IValue ivalue(const OptionalTensor& t) { return t ? c10::IValue(*t) : c10::IValue(); }
  static std::tuple<Tensor, Tensor> pair(const c10::IValue& v);

  mutable torch::jit::Module module_;
};

namespace script {

/// A new, empty TorchScript module of class `class_name` with a `training` attribute (true).
torch::jit::Module new_module(const std::string& class_name);
/// Registers a trainable parameter.
void add_parameter(torch::jit::Module& m, const std::string& name, Tensor value);
/// Compiles `source` (TorchScript: def forward(self, ...)) into `m`; errors name `what`.
/// `masked_softmax` adds the library's one masking rule as the method self.masked_softmax.
void define(torch::jit::Module& m, const std::string& source, const std::string& what, bool masked_softmax = false);

/// Linear layer y = x W^T + b (PyTorch's parameter names and initialisation).
torch::jit::Module linear(std::int64_t in_features, std::int64_t out_features, bool bias = true);
/// Layer normalisation over the last dimension (weight 1, bias 0).
torch::jit::Module layer_norm(std::int64_t dim, double eps = 1e-5);
/// Bidirectional one-layer LSTM, batch-first, on LibTorch's fused kernel: forward(x [B, T, I])
/// -> [B, T, 2 * hidden]. Parameters as torch.nn.LSTM names them (weight_ih_l0, weight_hh_l0,
/// bias_ih_l0, bias_hh_l0 and the *_reverse ones). `recurrent_dropout` is DropConnect on the
/// hidden-to-hidden weights while training (Merity et al. 2017's weight drop), the fused kernel's
/// stand-in for Keras' per-step recurrent dropout.
/// forward_lengths(x, lengths [B]) is the same for post-padded rows of different lengths: each
/// direction reads only a row's real steps before its padding, so results do not depend on how a
/// row was batched (what pack_padded_sequence does, without its slow CPU path).
/// forward_masked(x, mask [B, T]) does the same for padding anywhere (pre-padded rows included),
/// with zeros at the padded steps.
torch::jit::Module bilstm(std::int64_t input_size, std::int64_t hidden_size, double recurrent_dropout);

}  // namespace script
}  // namespace attn::nn
