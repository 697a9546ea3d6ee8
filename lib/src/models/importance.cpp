// The importance driver (see importance.h): which method needs what, each run once for a batch.
#include "attn/models/importance.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <torch/script.h>

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

std::int64_t importance_cost(const std::vector<Method>& methods, int steps, std::int64_t targets, std::int64_t units) {
  const std::int64_t K = std::max<std::int64_t>(1, targets);
  std::int64_t cost = 0;
  if (has(methods, Method::kGradient) || has(methods, Method::kGradInput)) cost += 3 * K;
  if (has(methods, Method::kIntegratedGradients)) cost += 3 * K * steps + 2;
  if (has(methods, Method::kLeaveOneOut)) cost += std::max<std::int64_t>(0, units) + 1;  // the whole input and a version per unit
  if (has(methods, Method::kAttentionRollout)) cost += 1;
  return cost;
}

namespace {

/// Throws for random, or for a method whose hook the task did not supply.
void check_hooks(const ImportanceInputs& in, const std::vector<Method>& methods) {
  for (Method m : methods) {
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
}

/// What the methods computed for the whole batch, before each row is cut out.
struct BatchScores {
  GradientScores gradients;
  std::vector<std::vector<float>> loo;  ///< per row [K * units]
  std::vector<torch::Tensor> layers;    ///< self-attention, per layer [B, heads, T, T]
};

/// Method `m`'s scores of row b: [K][units], or [1][units] for its in.explained target.
std::vector<std::vector<float>> row_scores(Method m, const ImportanceInputs& in, const BatchScores& batch, std::size_t b) {
  const auto i = static_cast<std::int64_t>(b);
  const std::int64_t K = in.targets, n = in.units[b], f = in.first.empty() ? 0 : in.first[b];
  const auto mine = [&](std::vector<std::vector<float>> all) {  // every target's rows: the explained one's
    if (in.explained.empty()) return all;
    return std::vector<std::vector<float>>{std::move(all.at(static_cast<std::size_t>(in.explained[b])))};
  };
  const std::size_t rows = in.explained.empty() ? static_cast<std::size_t>(K) : 1;
  switch (m) {
    case Method::kAttention:
      if (in.attention_per_target) return mine(split(in.attention[b], K, n));
      return std::vector<std::vector<float>>(rows, in.attention[b]);
    case Method::kGradient:  // the gradient methods ran for the explained targets only
      return row_of(batch.gradients.gradient, i, f, n);
    case Method::kGradInput:
      return row_of(batch.gradients.grad_input, i, f, n);
    case Method::kIntegratedGradients:
      return row_of(batch.gradients.integrated, i, f, n);
    case Method::kLeaveOneOut:
      return mine(split(batch.loo[b], K, n));
    case Method::kAttentionRollout: {
      std::vector<torch::Tensor> layers;
      for (const torch::Tensor& l : batch.layers) layers.push_back(l[i].slice(1, f, f + n).slice(2, f, f + n));
      const std::vector<float> r = n > 0 ? attention_rollout(layers, torch::tensor(in.attention[b])) : std::vector<float>();
      return std::vector<std::vector<float>>(rows, r);
    }
    case Method::kRandom:
      break;  // (refused by check_hooks)
  }
  return {};
}

/// The targets the gradient methods differentiate: every one of in.z's, or each row's explained
/// one (as a single target).
Targets explained_targets(const ImportanceInputs& in) {
  if (in.explained.empty()) return in.z;
  const torch::Tensor pick = torch::tensor(in.explained, torch::kInt64);
  return [z = in.z, pick](const torch::Tensor& x, const torch::Tensor& rows) {
    return z(x, rows).gather(1, pick.index_select(0, rows).unsqueeze(1));
  };
}

}  // namespace

std::vector<RowImportance> importance(const ImportanceInputs& in, const ImportanceOptions& options) {
  const std::vector<Method>& methods = options.methods;
  check_hooks(in, methods);
  const std::size_t B = in.units.size();
  const std::int64_t K = in.targets;
  if (!in.explained.empty() && in.explained.size() != B)
    throw std::invalid_argument("importance: " + std::to_string(in.explained.size()) + " explained targets for " + std::to_string(B) +
                                " rows");
  for (std::int64_t k : in.explained)
    if (k < 0 || k >= K)
      throw std::invalid_argument("importance: explained target " + std::to_string(k) + " is not in 0.." + std::to_string(K - 1));
  std::vector<RowImportance> out(B);
  for (std::size_t b = 0; b < B; ++b) {
    out[b].steps = has(methods, Method::kIntegratedGradients) ? options.steps : 0;
    if (!in.explained.empty()) out[b].target = in.explained[b];
  }
  if (B == 0) return out;
  if (K == 0 || in.width == 0) {  // nothing produced, or nothing to score: no rows
    for (RowImportance& r : out)
      for (Method m : methods) r.methods.push_back({m, {}});
    return out;
  }
  torch::jit::Module module = in.module;
  nn::EvalModeGuard eval(module);
  BatchScores batch;
  GradientOptions go;
  go.gradient = has(methods, Method::kGradient) || has(methods, Method::kGradInput);
  go.steps = has(methods, Method::kIntegratedGradients) ? options.steps : 0;
  go.budget = options.budget;
  if (go.gradient || go.steps > 0) {
    const auto [x, baseline] = in.embed();
    batch.gradients =
        gradient_scores(explained_targets(in), x, baseline.defined() ? baseline : torch::zeros_like(x), in.explained.empty() ? K : 1, go);
  }
  if (has(methods, Method::kLeaveOneOut)) batch.loo = leave_one_out(in.erased, in.units, K);
  if (has(methods, Method::kAttentionRollout)) batch.layers = in.self_attention();
  const torch::Tensor gap = batch.gradients.completeness_gap();
  for (std::size_t b = 0; b < B; ++b) {
    for (Method m : methods) out[b].methods.push_back({m, row_scores(m, in, batch, b)});
    if (!gap.defined()) continue;
    const torch::Tensor r = gap[static_cast<std::int64_t>(b)].to(torch::kFloat32).contiguous();
    out[b].completeness_gap.assign(r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
  }
  return out;
}

}  // namespace attn::models
