#pragma once
/// Unintended identity bias: the metric of Jigsaw's 2019 competition (Borkan et al. 2019, "Nuanced
/// Metrics for Measuring Unintended Bias with Real Data for Text Classification"). A row belongs to an
/// identity's subgroup when its annotation is >= 0.5 (an empty annotation: not annotated, not a
/// member); the background is every other row. Per identity, ROC AUC (ties counted half) over:
///   subgroup AUC   the subgroup's rows
///   BPSN AUC       the background's positives and the subgroup's negatives (low: the model scores
///                  the subgroup's non-toxic rows as high as toxic ones elsewhere: false positives)
///   BNSP AUC       the background's negatives and the subgroup's positives (low: false negatives)
/// Each family's generalised power mean over the identities, M_p = (mean of AUC^p)^(1/p), p = -5
/// (the worst identities weigh most), and
///   final = 0.25 x overall AUC + 0.25 x (M_p(subgroup) + M_p(BPSN) + M_p(BNSP)).
/// An AUC whose rows hold one class only is undefined: reported as such and left out of its power
/// mean (the competition's kernel would give NaN for everything); a family with no defined AUC
/// leaves the final metric undefined, never NaN.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::metrics {

/// The 2019 competition's scored identities, in its order.
const std::vector<std::string>& scored_identities();

/// The power mean's exponent and the final metric's weights.
inline constexpr double kBiasPower = -5;
inline constexpr double kBiasWeight = 0.25;

struct IdentityFigures {
  std::string identity;
  std::int64_t members = 0, positives = 0;  ///< rows in the subgroup, and of those the positive ones
  std::optional<double> subgroup_auc, bpsn_auc, bnsp_auc;
};

struct BiasFigures {
  double overall_auc = 0;
  std::vector<IdentityFigures> identities;
  std::optional<double> subgroup_mean, bpsn_mean, bnsp_mean;  ///< the power means
  std::optional<double> final_metric;
};

/// ROC AUC of `scores` against `positive` over the rows `take` marks, ties counted half; nullopt
/// when those rows hold one class only.
std::optional<double> auc_of(const std::vector<float>& scores, const std::vector<std::uint8_t>& positive,
                             const std::vector<std::uint8_t>& take);
/// (mean of v^p)^(1/p) over the values; nullopt for none.
std::optional<double> power_mean(const std::vector<double>& values, double p = kBiasPower);

/// The metric for `scores` (the model's probability of the label) against `positive`, with
/// `annotations[i][r]` identity i's annotation of row r (NaN: not annotated). The overall AUC must be
/// defined (both classes present), else std::invalid_argument.
BiasFigures bias_figures(const std::vector<float>& scores, const std::vector<std::uint8_t>& positive,
                         const std::vector<std::string>& identities, const std::vector<std::vector<float>>& annotations);

/// Bias-aware training (--identity-weighting): the weights many of the 2019 competition's
/// solutions trained with, which up-weigh exactly the rows BPSN AUC scores (subgroup negatives,
/// background positives) and every subgroup row:
///   w = 1 + [in a subgroup] + [in no subgroup and positive] + [in a subgroup and negative]
/// where a row is in a subgroup when any of its identity annotations is >= 0.5 (NaN: not a member).
/// So a background negative weighs 1, a background positive 2, a subgroup positive 2 and a subgroup
/// negative 3 (before the training rows' weights are scaled to mean 1).
std::vector<float> identity_weights(const std::vector<std::uint8_t>& positive, const std::vector<std::vector<float>>& annotations);

/// {"label", "overall_auc", "identities": [{identity, members, positives, subgroup_auc, bpsn_auc,
/// bnsp_auc (null: undefined)}], "power_means": {...}, "final" (null: undefined), "undefined": why}.
nlohmann::ordered_json to_json(const BiasFigures& figures, const std::string& label);
/// The table a terminal shows.
std::string bias_table(const BiasFigures& figures, const std::string& label);
/// The identity x metric heatmap (the competition's write-ups' picture): an HTML page whose table's
/// cells are shaded by 1 - AUC.
std::string bias_heatmap_html(const BiasFigures& figures, const std::string& label);

}  // namespace attn::metrics
