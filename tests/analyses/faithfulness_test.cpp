// Faithfulness on a toy whose every figure can be checked by hand: p = the sum of the kept units'
// weights, one label, methods that rank the units in known orders.
#include <cmath>

#include <catch2/catch.hpp>

#include "attn/analyses/faithfulness.h"
#include "attn/tasks/task.h"

using namespace attn;
using models::Method;

namespace {

/// Rows of units with weights; p(version) = the sum of its kept weights. attention ranks the units
/// in order of weight; gradient in the reverse order; leave-one-out (p(x) - p(x without t)) is the
/// weight itself.
class Toy : public tasks::Erasures {
 public:
  explicit Toy(std::vector<std::vector<float>> rows) : rows_(std::move(rows)) {}
  std::vector<std::string> labels() const override { return {"toxic"}; }
  std::int64_t size() const override { return static_cast<std::int64_t>(rows_.size()); }
  std::vector<tasks::AttributedRow> attribute(std::int64_t first, std::int64_t count, const std::vector<Method>& methods, int) override {
    std::vector<tasks::AttributedRow> out;
    for (std::int64_t r = first; r < first + count; ++r) {
      const auto& w = rows_[static_cast<std::size_t>(r)];
      tasks::AttributedRow row{r + 1, "id" + std::to_string(r + 1), static_cast<std::int64_t>(w.size()), {sum(w, {})}, {}};
      for (Method m : methods) {
        std::vector<float> s = w;
        if (m == Method::kGradient)
          for (float& v : s) v = -v;
        row.scores.push_back({s});
      }
      out.push_back(row);
    }
    return out;
  }
  std::vector<float> score(const std::vector<models::Version>& versions) override {
    std::vector<float> p;
    for (const auto& v : versions) p.push_back(sum(rows_[static_cast<std::size_t>(v.row)], v.keep));
    scored += versions.size();
    return p;
  }
  std::size_t scored = 0;

 private:
  static float sum(const std::vector<float>& w, const std::vector<std::uint8_t>& keep) {
    float s = 0;
    for (std::size_t t = 0; t < w.size(); ++t) s += keep.empty() || keep[t] ? w[t] : 0;
    return s;
  }
  std::vector<std::vector<float>> rows_;
};

}  // namespace

TEST_CASE("erasure: the top ceil(k n / 100) by score, ties by position", "[tasks][faithfulness]") {
  const std::vector<float> s = {0.1f, 0.5f, 0.5f, 0.2f};
  CHECK(analyses::erasure(s, 1, true) == std::vector<std::uint8_t>{0, 1, 0, 0});    // ceil(0.04) = 1: the first of the tied
  CHECK(analyses::erasure(s, 50, false) == std::vector<std::uint8_t>{1, 0, 0, 1});  // 2 removed
  CHECK(analyses::erasure(s, 20, true) == std::vector<std::uint8_t>{0, 1, 0, 0});   // ceil(0.8) = 1
}

TEST_CASE("Kendall tau-b: agreement, reversal, ties, and undefined for a constant list", "[tasks][faithfulness]") {
  CHECK(analyses::kendall_tau_b({1, 2, 3}, {10, 20, 30}) == Approx(1.0));
  CHECK(analyses::kendall_tau_b({1, 2, 3}, {3, 2, 1}) == Approx(-1.0));
  // (1,2,2) vs (1,2,3): concordant 2, discordant 0, one pair tied in a: 2 / sqrt((3-1)(3-0)).
  CHECK(analyses::kendall_tau_b({1, 2, 2}, {1, 2, 3}) == Approx(2 / std::sqrt(6.0)));
  CHECK(std::isnan(analyses::kendall_tau_b({1, 1, 1}, {1, 2, 3})));
  CHECK(std::isnan(analyses::kendall_tau_b({1}, {1})));
}

TEST_CASE("faithfulness figures of a hand-checked toy", "[tasks][faithfulness]") {
  // Row 1: weights 0.4 0.3 0.2 0.1 (n = 4; each bin removes or keeps ceil(k * 4 / 100) units:
  // 1, 1, 1, 1, 2). Row 2: 0.6 0.1 (n = 2: 1 unit in every bin).
  Toy toy({{0.4f, 0.3f, 0.2f, 0.1f}, {0.6f, 0.1f}});
  analyses::FaithfulnessOptions o;
  o.methods = {Method::kAttention, Method::kGradient};
  o.chunk = 1;
  std::vector<std::string> lines;
  o.per_row = [&](const std::string& l) { lines.push_back(l); };
  std::int64_t progress = 0;
  o.progress = [&](std::int64_t done, std::int64_t total) {
    CHECK(total == 2);
    progress = done;
  };
  const auto r = analyses::measure_faithfulness(toy, o);
  CHECK(progress == 2);
  CHECK(r.at("rows") == 2);
  CHECK(r.at("bins") == std::vector<int>{1, 5, 10, 20, 50});
  const auto& att = r.at("methods").at("attention").at("toxic");
  // attention removes the heaviest: row 1 comprehensiveness 0.4 (bins 1-20) and 0.7 (50); row 2 0.6.
  const std::vector<double> comp = att.at("comprehensiveness");
  CHECK(comp[0] == Approx((0.4 + 0.6) / 2));
  CHECK(comp[4] == Approx((0.7 + 0.6) / 2));
  // sufficiency keeps only the heaviest: row 1: 1.0 - 0.4 = 0.6 (bins 1-20), 1.0 - 0.7 = 0.3 (50); row 2: 0.7 - 0.6 = 0.1.
  const std::vector<double> suff = att.at("sufficiency");
  CHECK(suff[0] == Approx((0.6 + 0.1) / 2));
  CHECK(suff[4] == Approx((0.3 + 0.1) / 2));
  CHECK(att.at("aopc_comprehensiveness").get<double>() == Approx((4 * 0.5 + 0.65) / 5));
  CHECK(att.at("kendall_tau_loo").get<double>() == Approx(1.0));  // attention ranks as leave-one-out does
  // gradient ranks the lightest first: comprehensiveness row 1 0.1 (bins 1-20), 0.3 (50); row 2 0.1.
  const auto& grad = r.at("methods").at("gradient").at("toxic");
  CHECK(grad.at("comprehensiveness")[0].get<double>() == Approx((0.1 + 0.1) / 2));
  CHECK(grad.at("comprehensiveness")[4].get<double>() == Approx((0.3 + 0.1) / 2));
  CHECK(grad.at("kendall_tau_loo").get<double>() == Approx(-1.0));
  CHECK(r.at("methods").contains("random"));
  CHECK_FALSE(r.at("methods").contains("leave-one-out"));  // computed for tau, measured only when asked
  CHECK(r.at("agreement").at("attention").at("gradient").get<double>() == Approx(-1.0));
  CHECK(r.at("agreement").at("gradient").at("attention").get<double>() == Approx(-1.0));
  CHECK(r.at("agreement").at("attention").at("attention").get<double>() == 1.0);
  // Each row's figures, in order; distinct versions scored once (attention's and leave-one-out's
  // rankings agree, random's often do).
  REQUIRE(lines.size() == 2);
  const auto first = nlohmann::json::parse(lines[0]);
  CHECK(first.at("row") == 1);
  CHECK(first.at("id") == "id1");
  CHECK(first.at("methods").at("attention").at("toxic").at("comprehensiveness")[4].get<double>() == Approx(0.7));
  CHECK(toy.scored < 2 * 3 * 5 * 2);
  // The table names every method and label.
  const std::string table = analyses::format_faithfulness(r);
  CHECK_THAT(table, Catch::Contains("toxic") && Catch::Contains("attention") && Catch::Contains("random") && Catch::Contains("agreement"));
}

TEST_CASE("faithfulness: the same seed gives the same random floor", "[tasks][faithfulness]") {
  Toy a({{0.4f, 0.3f, 0.2f, 0.1f, 0.05f}}), b({{0.4f, 0.3f, 0.2f, 0.1f, 0.05f}});
  analyses::FaithfulnessOptions o;
  o.methods = {Method::kAttention};
  CHECK(analyses::measure_faithfulness(a, o).at("methods").at("random") == analyses::measure_faithfulness(b, o).at("methods").at("random"));
}
