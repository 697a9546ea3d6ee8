// ERASER's plausibility metrics (tasks/plausibility.h) on hand-checked toys.
#include <catch2/catch.hpp>

#include "attn/tasks/plausibility.h"

using namespace attn;

TEST_CASE("hard rationale: the top k words, ties to the later position, every word of a short text", "[tasks][plausibility]") {
  CHECK(tasks::hard_rationale({0.1f, 0.9f, 0.5f, 0.9f, 0.2f}, 2) == std::vector<std::int64_t>{1, 3});
  CHECK(tasks::hard_rationale({0.5f, 0.5f, 0.5f}, 2) == std::vector<std::int64_t>{1, 2});  // ties: the later first
  CHECK(tasks::hard_rationale({0.3f, 0.1f}, 5) == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("token F1 of the hard rationale", "[tasks][plausibility]") {
  // predicted {1, 3}, marked {1, 2}: precision 1/2, recall 1/2
  CHECK(tasks::token_f1({1, 3}, {0, 1, 1, 0}) == Approx(0.5));
  CHECK(tasks::token_f1({0}, {0, 1}) == 0.0);
  CHECK(tasks::token_f1({1}, {0, 1}) == Approx(1.0));
}

TEST_CASE("AUPRC: scikit-learn's precision-recall curve, then the trapezoid rule", "[tasks][plausibility]") {
  // scikit-learn's example: y = [0, 0, 1, 1], scores [0.1, 0.4, 0.35, 0.8] -> precision [2/3, 1/2, 1, 1],
  // recall [1, 1/2, 1/2, 0]; auc(recall, precision) = 1/2 * 1 + 0 + 1/2 * (1/2 + 2/3) / 2 = 0.7916...
  CHECK(tasks::auprc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == Approx(0.5 + 0.5 * (0.5 + 2.0 / 3) / 2));
  // ties make one point: all scores equal -> (recall 1, precision 1/2) from (0, 1): 1 * (1 + 1/2) / 2
  CHECK(tasks::auprc({0.2f, 0.2f}, {1, 0}) == Approx(0.75));
  CHECK(tasks::auprc({0.9f, 0.1f, 0.5f}, {1, 0, 1}) == Approx(1.0));  // every marked word above every other
}

TEST_CASE("IOU-F1: partial matches at IoU >= 0.5, recall past 1 as ERASER counts it, F1 of the means", "[tasks][plausibility]") {
  // Row 1: marked span [2, 4) (two words); the top 2 words 2 and 3 each have IoU 1/2 with it: 2 matches,
  // precision 2/2, recall 2/1 = 2. Token F1 1.
  tasks::RationaleScores a{{0.0f, 0.1f, 0.9f, 0.8f, 0.2f}, {0, 0, 1, 1, 0}, {{2, 4}}};
  // Row 2: marked [0, 3) (three words); top 2 words 0 and 4: word 0's IoU is 1/3 < 1/2: no match.
  tasks::RationaleScores b{{0.9f, 0.0f, 0.1f, 0.0f, 0.8f}, {1, 1, 1, 0, 0}, {{0, 3}}};
  const tasks::PlausibilityFigures f = tasks::plausibility_of({a, b}, 2);
  CHECK(f.iou_precision == Approx((1.0 + 0.0) / 2));
  CHECK(f.iou_recall == Approx((2.0 + 0.0) / 2));
  CHECK(f.iou_f1 == Approx(2 * 0.5 * 1.0 / 1.5));
  // token F1: row 1 1; row 2: predicted {0, 4}, marked {0, 1, 2}: precision 1/2, recall 1/3 -> 0.4
  CHECK(f.token_f1 == Approx((1.0 + 0.4) / 2));
  CHECK_THROWS_WITH(tasks::plausibility_of({}, 5), Catch::Contains("no row"));
}
