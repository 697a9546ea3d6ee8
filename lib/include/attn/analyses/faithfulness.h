#pragma once
/// Faithfulness: which importance method (models/methods.h) to believe about a model, measured
/// by removing what a method ranks highest and watching the probability move (ERASER, DeYoung et
/// al. 2020; ferret's definitions). For a row x of n units, label l, and a method's scores for l
/// ranked descending (ties: the earlier unit first), r_k = the top ceil(k n / 100) units:
///
///   comprehensiveness_k = p_l(x) - p_l(x without r_k)      higher: the method found what the model needs
///   sufficiency_k       = p_l(x) - p_l(only r_k, in order)  lower: what it found is enough
///   for k in kBins; aopc_comprehensiveness and aopc_sufficiency are their means over the bins;
///   kendall_tau_loo     = Kendall's tau-b between the method's scores and leave-one-out's, the mean
///                         over the rows where both vary
///
/// each the mean over the rows. `random` (seeded uniform scores) is the floor every method is read
/// against: removing units pushes inputs away from what the model was trained on (Madsen et al.
/// 2023), so only the difference to random means much. `agreement` is each pair of methods' mean
/// tau-b over rows and labels (Jain & Wallace 2019's comparison).
///
/// The tasks say what a row, a unit and a removal are (tasks::Erasures, from
/// TrainedModel::erasures); the measuring here is the same for all of them.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/importance.h"

namespace attn::tasks {
class Erasures;  // tasks/task.h
}

namespace attn::analyses {

/// The bins k (percent of a row's units) of comprehensiveness and sufficiency.
inline const std::vector<int> kBins = {1, 5, 10, 20, 50};

struct FaithfulnessOptions {
  /// The methods to measure (random is added as the floor; leave-one-out is computed for tau in
  /// any case and measured when listed).
  std::vector<models::Method> methods;
  int steps = models::kDefaultSteps;
  std::uint64_t seed = 1;   ///< random's scores
  std::int64_t chunk = 25;  ///< rows attributed and measured together
  /// After each chunk: rows done, of all.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
  /// Each row's figures as a JSON line, in row order (nullptr: none).
  std::function<void(const std::string& line)> per_row;
};

/// Kendall's tau-b of two score lists of one length; NaN when either is constant (or shorter than 2).
double kendall_tau_b(const std::vector<float>& a, const std::vector<float>& b);
/// The units a method ranks first: the top ceil(k n / 100) of `scores` by score descending, ties by
/// position, as a keep mask for `keep_ranked` = true (only them) or false (all but them).
std::vector<std::uint8_t> erasure(const std::vector<float>& scores, int k, bool keep_ranked);

/// Measures every row of `rows`: {"rows", "steps", "bins", "seed", "methods": {METHOD: {LABEL: {...}}},
/// "agreement": {METHOD: {METHOD: tau}}} as the header says.
nlohmann::ordered_json measure_faithfulness(tasks::Erasures& rows, const FaithfulnessOptions& options);

/// measure_faithfulness's result as a table for a terminal.
std::string format_faithfulness(const nlohmann::ordered_json& report);

}  // namespace attn::analyses
