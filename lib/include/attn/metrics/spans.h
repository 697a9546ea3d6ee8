#pragma once
/// SemEval-2021 Task 5 (Toxic Spans Detection, Pavlopoulos et al. 2021): predicted toxic
/// characters against the characters people marked, each a set of 0-based code point offsets.
/// A post scores the F1 of its two sets, 2|P ∩ G| / (|P| + |G|); a post whose marks are empty scores
/// 1 when nothing is predicted and 0 otherwise, and a post with marks but no prediction 0. The
/// task's score is the mean over posts. Precision |P ∩ G| / |P| and recall |P ∩ G| / |G| are
/// averaged per post the same way (both sets empty: 1; one empty: 0).
#include <cstdint>
#include <vector>

namespace attn::metrics {

struct SpanScores {
  double f1 = 0, precision = 0, recall = 0;  ///< means over posts
  std::int64_t posts = 0;
};

/// One post's F1 (offsets in any order; repeats count once).
double span_f1(const std::vector<std::int64_t>& predicted, const std::vector<std::int64_t>& gold);

/// The means over posts; `predicted` and `gold` hold a post each, in the same order (unequal counts:
/// std::invalid_argument).
SpanScores span_scores(const std::vector<std::vector<std::int64_t>>& predicted, const std::vector<std::vector<std::int64_t>>& gold);

}  // namespace attn::metrics
