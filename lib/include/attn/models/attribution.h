#pragma once
/// Importance beyond attention, the math: how much each unit of an input (a word's embedding, a
/// feature, a source character) drives one of a model's outputs, by the field's standard methods
/// (models/methods.h lists them). Each method's equations have their one home here; the attention
/// equations stay in nn/attention.h (the `attention` method is the model's own output). The driver
/// (models/importance.h) runs them over what a task supplies; nothing here knows a model.
///
/// With z_k target k's value (a label's logit; a produced character's log-probability), p_k its
/// probability, x_t unit t's input vector (a word's embedding; a feature as a vector of one) and b
/// the baseline (zero embeddings at the same positions, mask unchanged; a feature's baseline value):
///
///   attention             the model's own weights (not computed here)
///   gradient              ||dz_k/dx_t||_2 over the unit's vector (saliency; Simonyan et al. 2014)
///   grad-input            sum_e (x_te - b_te) dz_k/dx_te (Shrikumar et al. 2016; Captum's InputXGradient
///                         when b = 0)
///   integrated-gradients  sum_e (x_te - b_te) sum_s w_s dz_k/dx_te at b + a_s (x - b), a_s and w_s the
///                         Gauss-Legendre nodes and weights on [0, 1] (Sundararajan et al. 2017; Captum's
///                         default rule). Completeness: sum_t IG_t = z_k(x) - z_k(b) as the steps grow
///   leave-one-out         p_k(x) - p_k(x with unit t removed)
///   attention-rollout     Abnar & Zuidema (2020): per layer A = 0.5 mean_heads(W) + 0.5 I (rows
///                         renormalised), R = A_L ... A_1, and unit t's score sum_i a_i R_it for the
///                         pooling attention a over the last layer's outputs
///   random                uniform scores from a seed: the floor a faithfulness metric must beat
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/script.h>

namespace attn::models {

/// A quadrature rule on [0, 1]: integral f ~ sum_s weights[s] f(nodes[s]).
struct Quadrature {
  std::vector<double> nodes, weights;
};
/// Gauss-Legendre with n >= 1 nodes (exact for polynomials of degree 2n - 1), nodes ascending.
Quadrature gauss_legendre(int n);

/// The model as the gradient methods see it: target values [N, K] of the inputs x [N, T, E], row n
/// of x being a point on the path to input `rows[n]` (the callee knows each input's mask).
using Targets = std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& rows)>;

struct GradientOptions {
  bool gradient = false;          ///< the gradient at x: gradient and grad-input
  int steps = 0;                  ///< integrated gradients with this many steps (0: none)
  std::int64_t budget = 1 << 15;  ///< inputs x T per forward and backward pass (memory: a few KB each)
};

/// Scores [B, K, T] (undefined unless asked for).
struct GradientScores {
  torch::Tensor gradient, grad_input, integrated;
  torch::Tensor at_input, at_baseline;  ///< z [B, K] at x and at the baseline (with integrated gradients)
  /// sum_t integrated - (z(x) - z(b)) [B, K]: how far the steps are from completeness.
  torch::Tensor completeness_gap() const;
};

/// The gradient methods for inputs x [B, T, E] (float32) against `baseline` (x's shape), every one
/// of the K targets, all in batched forward and backward passes of at most options.budget input
/// positions. Parameters that require gradients get none (their .grad is left as it was).
GradientScores gradient_scores(const Targets& f, const torch::Tensor& x, const torch::Tensor& baseline, std::int64_t targets,
                               const GradientOptions& options);

/// A version of input `row` keeping only the units marked 1 in `keep` (order unchanged).
struct Version {
  std::int64_t row = 0;
  std::vector<std::uint8_t> keep;
};
/// The targets' probabilities of versions: [versions x K] row-major.
using VersionScores = std::function<std::vector<float>(const std::vector<Version>& versions)>;

/// leave-one-out of inputs with units[b] units: out[b][k * units[b] + t] = p_k(x_b) - p_k(x_b without
/// unit t), the versions scored in one call. Also gives p_k(x_b) in probabilities[b][k] when asked.
std::vector<std::vector<float>> leave_one_out(const VersionScores& score, const std::vector<std::int64_t>& units, std::int64_t targets,
                                              std::vector<std::vector<float>>* probabilities = nullptr);

/// Attention rollout over `layers` (each [heads, T, T] float32, query rows) for the pooling
/// attention `pooling` [T]: one score per unit.
std::vector<float> attention_rollout(const std::vector<torch::Tensor>& layers, const torch::Tensor& pooling);

}  // namespace attn::models
