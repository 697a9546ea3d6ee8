// SemEval-2021 Task 5's character F1 on hand-made posts: empty marks, empty predictions, both
// empty, overlaps, repeated offsets, the mean over posts.
#include <catch2/catch.hpp>

#include "attn/metrics/spans.h"

using namespace attn;

TEST_CASE("span F1: a post without marks scores 1 only when nothing is predicted", "[metrics][spans]") {
  CHECK(metrics::span_f1({}, {}) == 1.0);
  CHECK(metrics::span_f1({3, 4}, {}) == 0.0);
  CHECK(metrics::span_f1({}, {3, 4}) == 0.0);
}

TEST_CASE("span F1: the F1 of the two sets of characters, repeats counted once", "[metrics][spans]") {
  CHECK(metrics::span_f1({1, 2, 3}, {1, 2, 3}) == 1.0);
  CHECK(metrics::span_f1({3, 1, 2, 2}, {2, 1, 3}) == 1.0);
  // P = {1..4}, G = {3..8}: 2 in common, 2*2 / (4 + 6).
  CHECK(metrics::span_f1({1, 2, 3, 4}, {3, 4, 5, 6, 7, 8}) == Approx(0.4));
  CHECK(metrics::span_f1({10, 11}, {1, 2}) == 0.0);
}

TEST_CASE("span scores: precision, recall and F1 averaged over posts", "[metrics][spans]") {
  const metrics::SpanScores s = metrics::span_scores({{1, 2, 3, 4}, {}, {5}, {}}, {{3, 4, 5, 6, 7, 8}, {}, {}, {9}});
  CHECK(s.posts == 4);
  CHECK(s.f1 == Approx((0.4 + 1 + 0 + 0) / 4));
  CHECK(s.precision == Approx((0.5 + 1 + 0 + 0) / 4));
  CHECK(s.recall == Approx((2.0 / 6 + 1 + 0 + 0) / 4));
  CHECK(metrics::span_scores({}, {}).posts == 0);
  CHECK_THROWS_AS(metrics::span_scores({{1}}, {}), std::invalid_argument);
}
