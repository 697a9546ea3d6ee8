// FusedAdam (adam.h): Adam's update of one parameter in a single pass.
#include "attn/nn/adam.h"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

#include <ATen/Parallel.h>
#include <torch/script.h>

#include "vector_math.h"  // ATTN_VECTOR_CLONES

namespace attn::nn {
namespace {

struct Coefficients {
  float beta1, beta2, one_minus_beta1, one_minus_beta2, sqrt_correction2, eps, neg_step_size;
};

/// Adam (Kingma & Ba, algorithm 1, with epsilon outside the corrected square root as in
/// LibTorch and Keras) for elements [begin, end):
///   m = beta1 m + (1 - beta1) g
///   v = beta2 v + (1 - beta2) g^2
///   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
/// in LibTorch's order of operations.
ATTN_VECTOR_CLONES
void adam_update(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, std::int64_t begin,
                 std::int64_t end, const Coefficients& k) {
  const float b1 = k.beta1, b2 = k.beta2, c1 = k.one_minus_beta1, c2 = k.one_minus_beta2, s2 = k.sqrt_correction2, eps = k.eps,
              step = k.neg_step_size;
  for (std::int64_t i = begin; i < end; ++i) {
    const float gi = g[i];
    const float mi = m[i] * b1 + c1 * gi;
    const float vi = v[i] * b2 + c2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] + step * (mi / (std::sqrt(vi) / s2 + eps));
  }
}

/// The key torch::optim::Optimizer files a parameter's state under: the address of its
/// TensorImpl, printed (LibTorch 1.x) or as is (LibTorch 2.x).
template <class Map>
typename Map::key_type state_key(const Map&, const torch::Tensor& p) {
  using Key = typename Map::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;
    s << p.unsafeGetTensorImpl();
    return s.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

bool fusable(const torch::Tensor& t) {
  return !t.is_sparse() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous();
}

}  // namespace

torch::Tensor FusedAdam::step(LossClosure closure) {
  for (const auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::AdamOptions&>(group.options());
    if (o.weight_decay() != 0 || o.amsgrad()) return torch::optim::Adam::step(std::move(closure));
    for (const auto& p : group.params())
      if (p.grad().defined() && (!fusable(p) || !fusable(p.grad()))) return torch::optim::Adam::step(std::move(closure));
  }
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::AdamOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto key = state_key(state_, p);
      auto found = state_.find(key);
      if (found == state_.end()) {
        auto fresh = std::make_unique<torch::optim::AdamParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        found = state_.insert_or_assign(key, std::move(fresh)).first;
      }
      auto& state = static_cast<torch::optim::AdamParamState&>(*found->second);
      if (!state.exp_avg().is_contiguous()) state.exp_avg(state.exp_avg().contiguous());  // as a checkpoint may give them
      if (!state.exp_avg_sq().is_contiguous()) state.exp_avg_sq(state.exp_avg_sq().contiguous());
      state.step(state.step() + 1);
      const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
      const double correction1 = 1 - std::pow(beta1, state.step()), correction2 = 1 - std::pow(beta2, state.step());
      const Coefficients k{static_cast<float>(beta1),
                           static_cast<float>(beta2),
                           static_cast<float>(1 - beta1),
                           static_cast<float>(1 - beta2),
                           static_cast<float>(std::sqrt(correction2)),
                           static_cast<float>(o.eps()),
                           static_cast<float>(-o.lr() / correction1)};
      float* value = p.data_ptr<float>();
      const float* grad = p.grad().data_ptr<float>();
      float* m = state.exp_avg().data_ptr<float>();
      float* v = state.exp_avg_sq().data_ptr<float>();
      at::parallel_for(0, p.numel(), 1 << 15, [&](std::int64_t begin, std::int64_t end) { adam_update(value, grad, m, v, begin, end, k); });
    }
  }
  return loss;
}

}  // namespace attn::nn
