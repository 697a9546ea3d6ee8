// ERASER's plausibility metrics (analyses/plausibility.h) on hand-checked toys.
#include <limits>

#include <catch2/catch.hpp>

#include "attn/analyses/plausibility.h"

using namespace attn;

TEST_CASE("hard rationale: the top k words, ties to the later position, every word of a short text", "[tasks][plausibility]") {
  CHECK(analyses::hard_rationale({0.1f, 0.9f, 0.5f, 0.9f, 0.2f}, 2) == std::vector<std::int64_t>{1, 3});
  CHECK(analyses::hard_rationale({0.5f, 0.5f, 0.5f}, 2) == std::vector<std::int64_t>{1, 2});  // ties: the later first
  CHECK(analyses::hard_rationale({0.3f, 0.1f}, 5) == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("token F1 of the hard rationale", "[tasks][plausibility]") {
  // predicted {1, 3}, marked {1, 2}: precision 1/2, recall 1/2
  CHECK(analyses::token_f1({1, 3}, {0, 1, 1, 0}) == Approx(0.5));
  CHECK(analyses::token_f1({0}, {0, 1}) == 0.0);
  CHECK(analyses::token_f1({1}, {0, 1}) == Approx(1.0));
}

TEST_CASE("AUPRC: scikit-learn's precision-recall curve, then the trapezoid rule", "[tasks][plausibility]") {
  // scikit-learn's example: y = [0, 0, 1, 1], scores [0.1, 0.4, 0.35, 0.8] -> precision [2/3, 1/2, 1, 1],
  // recall [1, 1/2, 1/2, 0]; auc(recall, precision) = 1/2 * 1 + 0 + 1/2 * (1/2 + 2/3) / 2 = 0.7916...
  CHECK(analyses::auprc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == Approx(0.5 + 0.5 * (0.5 + 2.0 / 3) / 2));
  // ties make one point: all scores equal -> (recall 1, precision 1/2) from (0, 1): 1 * (1 + 1/2) / 2
  CHECK(analyses::auprc({0.2f, 0.2f}, {1, 0}) == Approx(0.75));
  CHECK(analyses::auprc({0.9f, 0.1f, 0.5f}, {1, 0, 1}) == Approx(1.0));  // every marked word above every other
}

TEST_CASE("IOU-F1: partial matches at IoU >= 0.5, recall past 1 as ERASER counts it, F1 of the means", "[tasks][plausibility]") {
  // Row 1: marked span [2, 4) (two words); the top 2 words 2 and 3 each have IoU 1/2 with it: 2 matches,
  // precision 2/2, recall 2/1 = 2. Token F1 1.
  analyses::RationaleScores a{{0.0f, 0.1f, 0.9f, 0.8f, 0.2f}, {0, 0, 1, 1, 0}, {{2, 4}}};
  // Row 2: marked [0, 3) (three words); top 2 words 0 and 4: word 0's IoU is 1/3 < 1/2: no match.
  analyses::RationaleScores b{{0.9f, 0.0f, 0.1f, 0.0f, 0.8f}, {1, 1, 1, 0, 0}, {{0, 3}}};
  const analyses::PlausibilityFigures f = analyses::plausibility_of({a, b}, 2);
  CHECK(f.iou_precision == Approx((1.0 + 0.0) / 2));
  CHECK(f.iou_recall == Approx((2.0 + 0.0) / 2));
  CHECK(f.iou_f1 == Approx(2 * 0.5 * 1.0 / 1.5));
  // token F1: row 1 1; row 2: predicted {0, 4}, marked {0, 1, 2}: precision 1/2, recall 1/3 -> 0.4
  CHECK(f.token_f1 == Approx((1.0 + 0.4) / 2));
  CHECK_THROWS_WITH(analyses::plausibility_of({}, 5), Catch::Contains("no row"));

  // The marks themselves as scores: row 1's top 2 are its two marked words (as above); row 2's three
  // marked words tie and the later two are taken, {1, 2}: IoU 1/3 each, no match; token F1 of
  // precision 1 and recall 2/3 = 0.8. AUPRC 1 on both rows.
  const analyses::PlausibilityFigures m = analyses::marks_as_scores({a, b}, 2);
  CHECK(m.iou_precision == Approx(0.5));
  CHECK(m.iou_recall == Approx(1.0));
  CHECK(m.iou_f1 == Approx(2 * 0.5 * 1.0 / 1.5));
  CHECK(m.token_f1 == Approx((1.0 + 0.8) / 2));
  CHECK(m.auprc == Approx(1.0));
}

TEST_CASE("plausibility of one explanation: its words' scores per label and method, the attention from the weights",
          "[tasks][plausibility]") {
  const auto e = nlohmann::ordered_json::parse(R"({
    "probabilities": {"toxic": 0.9, "insult": 0.2},
    "words": [{"word": "you", "weight": 0.1, "status": "kept"}, {"word": "...", "weight": 0, "status": "filtered"},
              {"word": "stupid", "weight": 0.6, "status": "kept"}, {"word": "idiot", "weight": 0.3, "status": "kept"}],
    "word_importance": {"gradient": {"toxic": [0.5, 0, 0.2, 0.1], "insult": [0.0, 0, 0.1, 0.9]}}})");
  const auto p = analyses::explanation_plausibility(e, {2, 3}, 2, "rationales[0]");
  CHECK(p["rationale"] == nlohmann::ordered_json::array({2, 3}));
  CHECK(p["top_k"] == 2);
  // The attention (not asked for: the weights) ranks stupid, idiot first: every figure 1.
  const auto& attention = p["by_label"]["toxic"]["attention"];
  CHECK(attention["token_f1"].get<double>() == Approx(1.0));
  CHECK(attention["auprc"].get<double>() == Approx(1.0));
  // IOU: the marked span [2, 4) matches each predicted word (IoU 0.5): precision 1, recall 2 / 1 (ERASER's count).
  CHECK(attention["iou_f1"].get<double>() == Approx(4.0 / 3.0));
  CHECK(p["by_label"]["insult"]["attention"] == attention);
  // The gradient for toxic: you (0.5) first, then stupid: token-F1 1/2; AUPRC over you, stupid, idiot, "..." (lowest).
  const auto& toxic = p["by_label"]["toxic"]["gradient"];
  CHECK(toxic["token_f1"].get<double>() == Approx(0.5));
  CHECK(toxic["auprc"].get<double>() == Approx(analyses::auprc({0.5f, std::numeric_limits<float>::lowest(), 0.2f, 0.1f}, {0, 0, 1, 1})));
  CHECK(p["by_label"]["insult"]["gradient"]["token_f1"].get<double>() == Approx(1.0));
  CHECK(analyses::explanation_plausibility(e, {}, 2, "r")["by_label"].empty());
  CHECK_THROWS_WITH(analyses::explanation_plausibility(e, {2, 4}, 2, "rationales[0]"),
                    Catch::Contains("rationales[0][1]: 4 is not a word of the text (it has 4)"));
}
