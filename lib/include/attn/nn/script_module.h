#pragma once
/// attn's modules are TorchScript modules built from source in C++ (torch::jit::Module::define):
/// one definition per module, the TorchScript source beside its builder, and the same object
/// trains in C++, saves with save(), and loads in Python (`torch.jit.load`) or C++
/// (`torch::jit::load`). ScriptModule is the typed C++ handle every module derives from.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/types.h>

namespace attn::nn {

using torch::Tensor;

/// Which operators a module's TorchScript may call. kPortable: PyTorch's own only, so that the file
/// it saves loads anywhere PyTorch does (Python's torch.jit.load); every file attn writes is
/// portable. kNative: attn's own CPU kernels too (fused_lstm.h), registered in attn's processes:
/// what attn trains and scores with. A module's two builds have the same parameters and compute the
/// same function (to float rounding; tested for every registered model).
enum class Runtime { kPortable, kNative };

/// An optional tensor argument (a mask): {} or a tensor.
using OptionalTensor = c10::optional<Tensor>;

/// Evaluation mode for the guard's lifetime: dropout off, no gradients, and TorchScript's graph
/// optimiser off on this thread, so that inference runs the graph as written, as training's
/// validation does (a saved model then scores exactly what its run's validation scored, and a
/// result never changes when the executor swaps in an optimised graph after a few runs). The
/// module's previous mode comes back when the guard goes, also when an exception leaves the scope.
/// A module already in eval mode is not written to, so threads may share one (a server's
/// inference threads).
class EvalModeGuard {
 public:
  explicit EvalModeGuard(torch::jit::Module& module) : module_(module), was_training_(module.is_training()) {
    if (was_training_) module_.eval();
  }
  ~EvalModeGuard() {
    if (was_training_) module_.train(true);
  }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::jit::Module& module_;
  bool was_training_;
  at::NoGradGuard no_grad_;
  torch::jit::GraphOptimizerEnabledGuard unoptimized_{false};
};

/// A configuration check: throws std::invalid_argument(message) unless `ok`.
void require_config(bool ok, const std::string& message);

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

}  // namespace script
}  // namespace attn::nn
