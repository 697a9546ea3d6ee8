// The metrics every surface shares: hand-computed cases, and the names and types of the vocabulary.
#include <cmath>

#include <catch2/catch.hpp>

#include "attn/metrics/metrics.h"

using namespace attn;

TEST_CASE("roc_auc: hand-computed cases, ties, a missing class", "[metrics]") {
  CHECK(metrics::roc_auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}) == Approx(0.75));
  CHECK(metrics::roc_auc({0.5f, 0.5f, 0.9f}, {0, 1, 1}) == Approx(0.75));  // tie counts half
  CHECK(metrics::roc_auc({0.9f, 0.1f}, {0, 1}) == Approx(0.0));
  CHECK(std::isnan(metrics::roc_auc({0.2f, 0.3f}, {1, 1})));
}

TEST_CASE("binary_metrics: log loss, accuracy, skipped rows, mean over defined AUCs", "[metrics]") {
  // two labels, three rows; row 2 skipped
  const std::vector<float> p = {0.9f, 0.2f, 0.3f, 0.6f, 0.5f, 0.5f};
  const std::vector<float> y = {1, 0, 0, 1, 1, 1};
  const auto e = metrics::binary_metrics(p, y, 2, {true, true, false});
  CHECK(e.rows == 2);
  CHECK(e.rows_skipped == 1);
  const double expected_loss = -(std::log(0.9) + std::log(0.8) + std::log(0.7) + std::log(0.6)) / 4;
  CHECK(e.loss == Approx(expected_loss));
  CHECK(e.accuracy == Approx(1.0));
  CHECK(e.auc[0] == Approx(1.0));
  CHECK(e.mean_auc == Approx(1.0));
}

TEST_CASE("classifier metrics as JSON: per-label AUC always an object (null where undefined), its mean a number", "[metrics]") {
  const auto one = metrics::to_json(metrics::binary_metrics({0.2f, 0.8f}, {0, 1}, 1), {"label"});
  std::vector<std::string> keys;
  for (const auto& [key, value] : one.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"loss", "accuracy", "auc", "mean_auc", "rows", "rows_skipped"});
  CHECK(one.at("loss").get<double>() == Approx(-std::log(0.8)));
  CHECK(one.at("auc") == nlohmann::ordered_json{{"label", 1.0}});
  CHECK(one.at("rows") == 2);
  const auto two = metrics::to_json(metrics::binary_metrics({0.2f, 0.8f, 0.4f, 0.1f}, {0, 1, 1, 1}, 2), {"toxic", "threat"});
  CHECK(two.at("auc").at("threat").is_null());  // only one class present
  CHECK(two.at("mean_auc") == 1.0);             // the mean of the defined ones
  CHECK(metrics::to_json(metrics::binary_metrics({0.5f}, {1}, 1), {"y"}).at("mean_auc").is_null());
}

TEST_CASE("string_accuracy: exact match and character accuracy, missing and extra characters count", "[metrics]") {
  const auto a = metrics::string_accuracy({"2000-01-01", "1999-12-3", "días"}, {"2000-01-01", "1999-12-31", "dias"});
  CHECK(a.exact_match == Approx(1.0 / 3));
  CHECK(a.char_accuracy == Approx((10.0 + 9 + 3) / (10 + 10 + 4)));
}

TEST_CASE("decisions: precision, recall and F1 per label at given thresholds or each label's best-F1 one", "[metrics]") {
  // one label, six rows
  const std::vector<float> p = {0.9f, 0.8f, 0.6f, 0.4f, 0.3f, 0.1f};
  const std::vector<float> y = {1, 0, 1, 1, 0, 0};
  auto d = metrics::decisions(p, y, 1, {}, "0.5");
  CHECK(d.threshold[0] == 0.5);
  CHECK(d.precision[0] == Approx(2.0 / 3));  // 0.9, 0.8, 0.6 predicted; 0.9 and 0.6 right
  CHECK(d.recall[0] == Approx(2.0 / 3));
  CHECK(d.f1[0] == Approx(2.0 / 3));
  d = metrics::decisions(p, y, 1, {}, "auto");
  CHECK(d.threshold[0] == Approx(0.4));  // predicting 0.9..0.4 positive: tp 3, fp 1 -> F1 6/7, the best
  CHECK(d.f1[0] == Approx(6.0 / 7));
  CHECK(d.recall[0] == Approx(1.0));
  nlohmann::ordered_json m;
  metrics::add_to(m, d, {"toxic"});
  CHECK(m.at("f1").at("toxic").get<double>() == Approx(6.0 / 7));
  CHECK_THROWS_WITH(metrics::decisions(p, y, 1, {}, "0.5,0.6"), Catch::Contains("2 thresholds for 1 labels"));
  CHECK_THROWS_AS(metrics::check_thresholds("1.5", 2), std::invalid_argument);
  CHECK_NOTHROW(metrics::check_thresholds("0.3,0.7", 2));
}

namespace {
// Three classes, six rows: the one-hot classes and the probabilities (row 2 a tie of A and B,
// decided A, the first; row 4, a B, decided A).
const std::vector<float> kClassY = {1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1};
const std::vector<float> kClassP = {0.6f, 0.3f, 0.1f, 0.4f, 0.4f, 0.2f, 0.2f, 0.5f, 0.3f,
                                    0.5f, 0.3f, 0.2f, 0.1f, 0.2f, 0.7f, 0.3f, 0.3f, 0.4f};
}  // namespace

TEST_CASE("class_metrics: accuracy, per-class and macro F1, confusion, cross-entropy, by hand", "[metrics]") {
  const auto m = metrics::class_metrics(kClassP, kClassY, 3);
  CHECK(m.rows == 6);
  CHECK(m.accuracy == Approx(5.0 / 6));
  CHECK(m.confusion == std::vector<std::vector<std::int64_t>>{{2, 0, 0}, {1, 1, 0}, {0, 0, 2}});
  CHECK(m.precision[0] == Approx(2.0 / 3));
  CHECK(m.recall[1] == Approx(0.5));
  CHECK(m.f1[0] == Approx(0.8));
  CHECK(m.f1[1] == Approx(2.0 / 3));
  CHECK(m.f1[2] == Approx(1.0));
  CHECK(m.macro_f1 == Approx((0.8 + 2.0 / 3 + 1.0) / 3));
  const double ce = -(std::log(0.6) + std::log(0.4) + std::log(0.5) + std::log(0.3) + std::log(0.7) + std::log(0.4)) / 6;
  CHECK(m.loss == Approx(ce));
}

TEST_CASE("macro_f1_offsets: the log-probability offsets of best macro-F1, the first class fixed, the smaller on ties", "[metrics]") {
  // Class 1 is under-decided: rows 2 and 3 are class 1 with p1 0.4 and 0.45. log(0.6 / 0.4) = 0.405,
  // log(0.55 / 0.45) = 0.201, log(0.9 / 0.1) = 2.197: every b1 in (0.405, 2.197) decides all four
  // rows right, and 0.5 is the first such point of the grid by |b|.
  const std::vector<float> p = {0.9f, 0.1f, 0.6f, 0.4f, 0.55f, 0.45f, 0.2f, 0.8f};
  const std::vector<float> y = {1, 0, 0, 1, 0, 1, 0, 1};
  const metrics::LogitAdjustment a = metrics::macro_f1_offsets(p, y, 2);
  REQUIRE(a.offsets.size() == 2);
  CHECK(a.offsets[0] == 0.0);
  CHECK(a.offsets[1] == Approx(0.5));
  CHECK(a.before == Approx(0.5));  // decided 0, 0, 0, 1: F1 2/4 for each class
  CHECK(a.after == Approx(1.0));
  CHECK(a.before == Approx(metrics::class_metrics(p, y, 2).macro_f1));
  // Already decided right: nothing moves.
  const metrics::LogitAdjustment none = metrics::macro_f1_offsets(kClassP, kClassY, 3);
  const double best = metrics::class_metrics(kClassP, kClassY, 3).macro_f1;
  CHECK(none.before == Approx(best));
  CHECK(none.after >= none.before);
  const metrics::LogitAdjustment right =
      metrics::macro_f1_offsets({0.7f, 0.2f, 0.1f, 0.1f, 0.8f, 0.1f, 0.3f, 0.3f, 0.4f}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, 3);
  CHECK(right.offsets == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(right.after == Approx(1.0));
}

TEST_CASE("class_metrics: one-vs-rest AUC per class and Hand & Till's one-vs-one AUC, ties counting half", "[metrics]") {
  const auto m = metrics::class_metrics(kClassP, kClassY, 3);
  // A: positives 0.6, 0.4 against 0.2, 0.5, 0.1, 0.3: 7 of 8 pairs. B: 0.5, 0.3 against 0.3, 0.4,
  // 0.2, 0.3: 4 + 0.5 + 1 + 0.5 of 8. C: every pair.
  CHECK(m.auc[0] == Approx(0.875));
  CHECK(m.auc[1] == Approx(0.75));
  CHECK(m.auc[2] == Approx(1.0));
  CHECK(m.mean_auc == Approx(0.875));
  // (A, B): (AUC(p_A) 3/4 + AUC(p_B) 2.5/4) / 2; (A, C): 1; (B, C): (3.5/4 + 1) / 2.
  CHECK(m.ovo_auc == Approx((0.6875 + 1.0 + 0.9375) / 3));
}

TEST_CASE("class_metrics: a class absent from the rows leaves its pairs out, skipped rows count nowhere", "[metrics]") {
  // Rows 1-4 only (no C): the one pair (A, B).
  const std::vector<bool> keep = {true, true, true, true, false, false};
  const auto m = metrics::class_metrics(kClassP, kClassY, 3, keep);
  CHECK(m.rows == 4);
  CHECK(m.rows_skipped == 2);
  CHECK(m.ovo_auc == Approx(0.6875));
  CHECK(std::isnan(m.auc[2]));                       // no C row: undefined
  CHECK(m.macro_f1 == Approx((0.8 + 2.0 / 3) / 2));  // C neither a row's class nor decided: not averaged
  const auto j = metrics::to_json(m, {"A", "B", "C"}, true);
  CHECK(j.at("auc").at("C").is_null());
  CHECK(j.at("confusion").at("B") == nlohmann::ordered_json{{"A", 1}, {"B", 1}, {"C", 0}});
  std::vector<std::string> keys;
  const auto brief = metrics::to_json(m, {"A", "B", "C"}, false);
  for (const auto& [key, value] : brief.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"loss", "accuracy", "macro_f1", "ovo_auc", "mean_auc", "auc", "rows", "rows_skipped"});
}
