#pragma once
/// The importance driver: runs the asked methods (models/methods.h) over one batch of rows that a
/// task describes, and cuts each row's scores out. The task says what a unit, a target, a baseline
/// and a removed unit are for its models (ImportanceInputs: lib/src/tasks/); the driver knows which
/// method needs what, runs each once for the batch, in one order, and knows nothing of a task. The
/// math of each method is in models/attribution.h.
///
/// Adding a method: its row in methods.cpp's list, its math in attribution.cpp if it brings any,
/// its case in importance.cpp (what it needs from the task, its cost, which models can give it),
/// and tests/models/importance_test.cpp.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <torch/script.h>

#include "attn/models/attribution.h"
#include "attn/models/methods.h"

namespace attn::models {

/// What a model can give besides its attention (a task's TrainedModel::methods()).
struct ImportanceAbilities {
  bool embedded = false;        ///< its outputs as a function of its inputs' vectors: the gradient methods
  bool self_attention = false;  ///< self-attention layers: attention rollout
};
/// The methods a model with `abilities` gives, in all_methods()' order (never random: faithfulness's floor).
std::vector<Method> available_methods(const ImportanceAbilities& abilities);

/// What `methods` cost an input of `units` units beyond the one forward pass every explanation
/// makes, in forward passes (a forward and backward pass counts 3), with `targets` targets:
/// leave-one-out runs units + 1 versions (15 units: a short text's worth).
std::int64_t importance_cost(const std::vector<Method>& methods, int steps, std::int64_t targets, std::int64_t units = 15);

/// One batch of rows as the model reads them: row b's units[b] units sit at positions
/// [first[b], first[b] + units[b]) of the batch's `width`.
struct ImportanceInputs {
  /// Run in evaluation mode (callers that share it between threads put it there first); its
  /// parameters are left as they are (autograd::grad takes the inputs' gradients only).
  torch::jit::Module module;
  std::int64_t targets = 0;         ///< K: the labels, the produced characters, 1
  std::int64_t width = 0;           ///< T
  std::vector<std::int64_t> units;  ///< per row (the batch has units.size() rows)
  std::vector<std::int64_t> first;  ///< per row (empty: 0 for every row)
  /// Per row, the model's own weights over its units: [units] for every target alike (a pooling
  /// attention, which attention rollout rolls back), or [K x units] row-major with attention_per_target.
  std::vector<std::vector<float>> attention;
  bool attention_per_target = false;
  /// The gradient methods: the inputs' vectors x [B, T, E] and their baseline (undefined: zeros,
  /// the mask unchanged); `z` the targets' values of points on the paths ([N, K], attribution.h).
  std::function<std::pair<torch::Tensor, torch::Tensor>()> embed;
  Targets z;
  /// Leave-one-out: the targets' probabilities of versions of the rows (Version::row: a row of this batch).
  VersionScores erased;
  /// Attention rollout: per layer [B, heads, T, T].
  std::function<std::vector<torch::Tensor>()> self_attention;
  /// Per row, the one target its scores are for (empty: every target). The gradient methods then
  /// take one backward pass per point instead of K (the forward pass and one backward pass: about
  /// 3 forward passes' work instead of 1 + 2K).
  std::vector<std::int64_t> explained;
};

struct ImportanceOptions {
  std::vector<Method> methods;  ///< the results list them in this order
  int steps = kDefaultSteps;    ///< integrated gradients' Gauss-Legendre nodes
  /// Input positions (rows x width) per forward and backward pass of the gradient methods: large
  /// enough for the products to run at full speed, small enough to keep a pass's memory to ~100 MB.
  std::int64_t budget = 1 << 15;
};

struct MethodScores {
  Method method;
  std::vector<std::vector<float>> scores;  ///< [K][units] ([1][units] with in.explained); no rows when K or the width is 0
};

/// One row's scores.
struct RowImportance {
  std::vector<MethodScores> methods;    ///< in options.methods' order
  int steps = 0;                        ///< options.steps when integrated gradients were asked, else 0
  std::vector<float> completeness_gap;  ///< [K] ([1] with in.explained): integrated gradients' sum - (z(x) - z(baseline)), when computed
  std::int64_t target = -1;             ///< in.explained's target for the row, or -1: the scores are for every target
};

/// options.methods' scores for every row of `in`, the gradient methods in one call of
/// gradient_scores, leave-one-out in one call of leave_one_out, in that order. With no target or
/// no unit (K or the width 0) every method has no rows and the model is not run. Throws
/// std::invalid_argument for random (faithfulness's floor, not an explanation), a method whose
/// hook `in` does not have, or an `explained` list that is not one target in 0..K-1 per row.
std::vector<RowImportance> importance(const ImportanceInputs& in, const ImportanceOptions& options);

}  // namespace attn::models
