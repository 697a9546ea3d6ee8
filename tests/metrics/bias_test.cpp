// Jigsaw 2019's bias metric (metrics/bias.h): each AUC against brute-force pair counting with ties, the
// power mean, the final metric on a hand-computed toy, undefined subgroups left out, never NaN.
#include <cmath>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#include "attn/metrics/bias.h"

using namespace attn;

namespace {

/// AUC by counting pairs: a positive above a negative 1, a tie 1/2.
double pairs_auc(const std::vector<float>& s, const std::vector<std::uint8_t>& y, const std::vector<std::uint8_t>& take) {
  double wins = 0, pairs = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); ++j)
      if (take[i] && take[j] && y[i] && !y[j]) {
        pairs += 1;
        wins += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
      }
  return wins / pairs;
}

}  // namespace

TEST_CASE("bias: subgroup, BPSN and BNSP AUC equal brute-force pair counting, ties counted half", "[metrics][bias]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 9);  // few distinct scores: many ties
  const std::size_t n = 300;
  std::vector<float> scores(n);
  std::vector<std::uint8_t> y(n);
  std::vector<std::vector<float>> ann(2, std::vector<float>(n));
  for (std::size_t r = 0; r < n; ++r) {
    scores[r] = static_cast<float>(level(rng)) / 10.0f;
    y[r] = level(rng) < 4;
    ann[0][r] = static_cast<float>(level(rng)) / 9.0f;                        // member when >= 0.5
    ann[1][r] = r % 3 == 0 ? std::numeric_limits<float>::quiet_NaN() : 1.0f;  // not annotated: not a member
  }
  const metrics::BiasFigures f = metrics::bias_figures(scores, y, {"a", "b"}, ann);
  CHECK(f.overall_auc == Approx(pairs_auc(scores, y, std::vector<std::uint8_t>(n, 1))));
  for (std::size_t i = 0; i < 2; ++i) {
    std::vector<std::uint8_t> sub(n), bpsn(n), bnsp(n);
    for (std::size_t r = 0; r < n; ++r) {
      const bool in = ann[i][r] >= 0.5f;
      sub[r] = in;
      bpsn[r] = (in && !y[r]) || (!in && y[r]);
      bnsp[r] = (in && y[r]) || (!in && !y[r]);
    }
    INFO(f.identities[i].identity);
    CHECK(f.identities[i].subgroup_auc.value() == Approx(pairs_auc(scores, y, sub)));
    CHECK(f.identities[i].bpsn_auc.value() == Approx(pairs_auc(scores, y, bpsn)));
    CHECK(f.identities[i].bnsp_auc.value() == Approx(pairs_auc(scores, y, bnsp)));
  }
  CHECK(f.identities[1].members == 200);  // the NaN rows are not members
}

TEST_CASE("bias: the final metric on a hand-computed toy, an identity without members left out", "[metrics][bias]") {
  const std::vector<float> s = {0.9f, 0.8f, 0.3f, 0.2f, 0.7f, 0.6f, 0.4f, 0.1f};
  const std::vector<std::uint8_t> y = {1, 1, 0, 0, 1, 0, 1, 0};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> ann = {{1, 1, 1, 1, 0, 0, nan, 0}, {0, 0, 0, 0, 1, 0.5f, 0.5f, 1}, std::vector<float>(8, nan)};
  const metrics::BiasFigures f = metrics::bias_figures(s, y, {"a", "b", "nobody"}, ann);
  CHECK(f.overall_auc == Approx(15.0 / 16.0));  // only 0.4 (positive) < 0.6 (negative)
  CHECK(f.identities[0].subgroup_auc.value() == Approx(1.0));
  CHECK(f.identities[1].subgroup_auc.value() == Approx(0.75));  // {0.7, 0.4} against {0.6, 0.1}
  CHECK(f.identities[1].bpsn_auc.value() == Approx(1.0));       // {0.9, 0.8} against {0.6, 0.1}
  CHECK(f.identities[1].bnsp_auc.value() == Approx(1.0));       // {0.7, 0.4} against {0.3, 0.2}
  CHECK(f.identities[2].members == 0);
  CHECK_FALSE(f.identities[2].subgroup_auc.has_value());
  CHECK_FALSE(f.identities[2].bpsn_auc.has_value());  // its "subgroup negatives" are none: background positives only
  const double m = std::pow((1.0 + std::pow(0.75, -5.0)) / 2.0, -1.0 / 5.0);
  CHECK(f.subgroup_mean.value() == Approx(m));
  CHECK(f.final_metric.value() == Approx(0.25 * 15.0 / 16.0 + 0.25 * (m + 1.0 + 1.0)));
  const auto j = metrics::to_json(f, "toxic");
  CHECK(j["identities"][2]["subgroup_auc"].is_null());
  CHECK(j["final"].get<double>() == Approx(f.final_metric.value()));
  CHECK(metrics::bias_table(f, "toxic").find("undef") != std::string::npos);
  const std::string page = metrics::bias_heatmap_html(f, "toxic");
  CHECK(page.find("background:rgb(") != std::string::npos);  // the shaded cells
  CHECK(page.find("BPSN AUC") != std::string::npos);
}

TEST_CASE("bias: power mean p = -5 weighs the worst, undefined everywhere leaves the final metric undefined, not NaN", "[metrics][bias]") {
  CHECK(metrics::power_mean({0.8, 0.8}).value() == Approx(0.8));
  CHECK(metrics::power_mean({0.9, 0.5}).value() < 0.6);  // nearer the worst than the mean 0.7
  CHECK_FALSE(metrics::power_mean({}).has_value());
  const std::vector<float> s = {0.9f, 0.1f};
  const std::vector<std::uint8_t> y = {1, 0};
  const metrics::BiasFigures f = metrics::bias_figures(s, y, {"a"}, {{1.0f, 0.0f}});  // the subgroup holds one positive only
  CHECK_FALSE(f.identities[0].subgroup_auc.has_value());
  CHECK_FALSE(f.final_metric.has_value());
  const auto j = metrics::to_json(f, "toxic");
  CHECK(j["final"].is_null());
  CHECK(j["undefined"].get<std::string>().find("subgroup") != std::string::npos);
  CHECK_THROWS_WITH(metrics::bias_figures({0.2f, 0.3f}, {1, 1}, {}, {}), Catch::Contains("one class only"));
}

TEST_CASE("bias: identity weights up-weigh subgroup rows, background positives and subgroup negatives", "[metrics][bias]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Rows: background negative, background positive, subgroup positive, subgroup negative (of the
  // second identity), a member of both (negative), annotations below 0.5 and missing (background).
  const std::vector<std::uint8_t> positive = {0, 1, 1, 0, 0, 1, 0};
  const std::vector<std::vector<float>> annotations = {{0, 0, 1, 0, 0.5f, 0.49f, nan}, {0, 0, 0, 0.8f, 1, 0, nan}};
  CHECK(metrics::identity_weights(positive, annotations) == std::vector<float>{1, 2, 2, 3, 3, 2, 1});
  CHECK(metrics::identity_weights({1, 0}, {}) == std::vector<float>{2, 1});  // no identity: all background
}
