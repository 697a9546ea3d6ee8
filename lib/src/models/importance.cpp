// The importance driver (see importance.h): which method needs what, each run once for a batch.
#include "attn/models/importance.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "attn/nn/script_module.h"

namespace attn::models {
namespace {

bool has(const std::vector<Method>& methods, Method m) { return std::find(methods.begin(), methods.end(), m) != methods.end(); }

/// Row b of scores [B, K, T] at its units, as [K][units].
std::vector<std::vector<float>> row_of(const torch::Tensor& scores, std::int64_t b, std::int64_t first, std::int64_t n) {
  const torch::Tensor r = scores[b].slice(1, first, first + n).to(torch::kFloat32).contiguous();
  std::vector<std::vector<float>> rows;
  for (std::int64_t k = 0; k < r.size(0); ++k) rows.emplace_back(r[k].data_ptr<float>(), r[k].data_ptr<float>() + n);
  return rows;
}

/// K rows of n scores from one [K * n] list (k-major).
std::vector<std::vector<float>> split(const std::vector<float>& all, std::int64_t K, std::int64_t n) {
  std::vector<std::vector<float>> rows;
  for (std::int64_t k = 0; k < K; ++k) rows.emplace_back(all.begin() + k * n, all.begin() + (k + 1) * n);
  return rows;
}

}  // namespace

std::vector<Method> available_methods(const ImportanceAbilities& abilities) {
  std::vector<Method> out = {Method::kAttention};
  if (abilities.embedded) out.insert(out.end(), {Method::kGradient, Method::kGradInput, Method::kIntegratedGradients});
  out.push_back(Method::kLeaveOneOut);
  if (abilities.self_attention) out.push_back(Method::kAttentionRollout);
  return out;
}

std::int64_t importance_cost(const std::vector<Method>& methods, int steps, std::int64_t targets) {
  const std::int64_t K = std::max<std::int64_t>(1, targets);
  std::int64_t cost = 0;
  if (has(methods, Method::kGradient) || has(methods, Method::kGradInput)) cost += 3 * K;
  if (has(methods, Method::kIntegratedGradients)) cost += 3 * K * steps + 2;
  if (has(methods, Method::kLeaveOneOut)) cost += 16;  // a version per unit, in batches: a short text's worth
  if (has(methods, Method::kAttentionRollout)) cost += 1;
  return cost;
}

std::vector<RowImportance> importance(const ImportanceInputs& in, const ImportanceOptions& options) {
  const std::vector<Method>& methods = options.methods;
  const bool gradients = has(methods, Method::kGradient) || has(methods, Method::kGradInput) || has(methods, Method::kIntegratedGradients);
  for (Method m : methods) {  // what each method needs from the task
    bool given = true;
    switch (m) {
      case Method::kGradient:
      case Method::kGradInput:
      case Method::kIntegratedGradients:
        given = in.embed && in.z;
        break;
      case Method::kLeaveOneOut:
        given = bool(in.erased);
        break;
      case Method::kAttentionRollout:
        given = in.self_attention && !in.attention_per_target;
        break;
      case Method::kRandom:
        throw std::invalid_argument("random is faithfulness's floor, not an explanation");
      case Method::kAttention:
        break;
    }
    if (!given) throw std::invalid_argument(std::string("this model cannot give ") + method_name(m));
  }
  const std::size_t B = in.units.size();
  const std::int64_t K = in.targets, T = in.width;
  std::vector<RowImportance> out(B);
  for (RowImportance& r : out) r.steps = has(methods, Method::kIntegratedGradients) ? options.steps : 0;
  if (B == 0) return out;
  if (K == 0 || T == 0) {  // nothing produced, or nothing to score: no rows
    for (RowImportance& r : out)
      for (Method m : methods) r.methods.push_back({m, {}});
    return out;
  }
  const auto first = [&](std::size_t b) { return in.first.empty() ? std::int64_t{0} : in.first[b]; };
  torch::jit::Module module = in.module;
  nn::EvalModeGuard eval(module);
  GradientScores g;
  if (gradients) {
    GradientOptions go;
    go.gradient = has(methods, Method::kGradient) || has(methods, Method::kGradInput);
    go.steps = has(methods, Method::kIntegratedGradients) ? options.steps : 0;
    go.budget = options.budget;
    const FrozenParameters frozen(module);  // gradients of the inputs only
    const auto [x, baseline] = in.embed();
    g = gradient_scores(in.z, x, baseline.defined() ? baseline : torch::zeros_like(x), K, go);
  }
  std::vector<std::vector<float>> loo;
  if (has(methods, Method::kLeaveOneOut)) loo = leave_one_out(in.erased, in.units, K);
  std::vector<torch::Tensor> layers;
  if (has(methods, Method::kAttentionRollout)) layers = in.self_attention();  // each [B, heads, T, T]
  const torch::Tensor gap = g.completeness_gap();
  for (std::size_t b = 0; b < B; ++b) {
    const auto i = static_cast<std::int64_t>(b);
    const std::int64_t n = in.units[b], f = first(b);
    RowImportance& row = out[b];
    for (Method m : methods) {
      MethodScores s{m, {}};
      switch (m) {
        case Method::kAttention:
          if (in.attention_per_target)
            s.scores = split(in.attention[b], K, n);
          else
            s.scores.assign(static_cast<std::size_t>(K), in.attention[b]);
          break;
        case Method::kGradient:
          s.scores = row_of(g.gradient, i, f, n);
          break;
        case Method::kGradInput:
          s.scores = row_of(g.grad_input, i, f, n);
          break;
        case Method::kIntegratedGradients:
          s.scores = row_of(g.integrated, i, f, n);
          break;
        case Method::kLeaveOneOut:
          s.scores = split(loo[b], K, n);
          break;
        case Method::kAttentionRollout: {
          std::vector<torch::Tensor> mine;
          for (const torch::Tensor& l : layers) mine.push_back(l[i].slice(1, f, f + n).slice(2, f, f + n));
          const std::vector<float> r = n > 0 ? attention_rollout(mine, torch::tensor(in.attention[b])) : std::vector<float>();
          s.scores.assign(static_cast<std::size_t>(K), r);
          break;
        }
        case Method::kRandom:
          break;  // (refused above)
      }
      row.methods.push_back(std::move(s));
    }
    if (gap.defined()) {
      const torch::Tensor r = gap[i].to(torch::kFloat32).contiguous();
      row.completeness_gap.assign(r.data_ptr<float>(), r.data_ptr<float>() + K);
    }
  }
  return out;
}

}  // namespace attn::models
