#pragma once
/// Classification metrics over multi-label predictions stored row-major [rows, labels].
#include <cstdint>
#include <string>
#include <vector>

namespace attn::train {

/// Area under the ROC curve (the Kaggle Jigsaw metric) of `scores` against 0/1 `labels`, with tied
/// scores given their average rank. NaN when only one class is present.
double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels);

struct Evaluation {
  std::int64_t rows = 0;
  double loss = 0;      ///< mean binary cross-entropy over rows and labels (p clipped to [1e-7, 1 - 1e-7])
  double accuracy = 0;  ///< mean over rows and labels of (p > 0.5) == y (Keras' binary accuracy)
  std::vector<double> auc;  ///< per label; NaN where undefined
  double mean_auc = 0;      ///< mean of the defined per-label AUCs (NaN if none)
};

/// Metrics of probabilities `probs` against `labels`, both [rows, n_labels]; rows with
/// keep[row] == false are skipped (Kaggle's -1 rows), keep empty = all rows.
Evaluation evaluate(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_labels,
                    const std::vector<bool>& keep = {});

}  // namespace attn::train
