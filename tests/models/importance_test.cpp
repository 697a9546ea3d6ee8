// The importance driver (models/importance.h) with stand-in hooks whose answers are known: each
// row's scores cut at its own positions, targets split and repeated, empty rows and batches, the
// methods in the order asked, what each method needs, and the model left as it was (threads share it).
#include <stdexcept>

#include <torch/script.h>
#include <catch2/catch.hpp>

#include "attn/models/importance.h"

using namespace attn;
using models::Method;

namespace {

/// A module with one trainable parameter (to see it left alone).
torch::jit::Module stand_in() {
  torch::jit::Module m("StandIn");
  m.register_parameter("w", torch::ones({2}).requires_grad_(), false);
  return m;
}

/// Two rows in a batch of width 4, pre-padded as a text classifier's: row 0 has 3 units (positions
/// 1..3), row 1 has 1 unit (position 3). Two targets, linear in x: z_k = sum_t c_k[t] sum_e x[t, e],
/// so gradient = |c_k[t]| sqrt(E), grad-input = integrated gradients = c_k[t] sum_e x[t, e].
struct Linear {
  torch::Tensor x = torch::arange(16, torch::kFloat32).view({2, 4, 2}) / 10;                         // [B, T, E]
  torch::Tensor c = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f, -1.0f, 0.5f, 0.25f, 2.0f}).view({2, 4});  // [K, T]
  models::ImportanceInputs inputs(const torch::jit::Module& module) const {
    models::ImportanceInputs in;
    in.module = module;
    in.targets = 2;
    in.width = 4;
    in.units = {3, 1};
    in.first = {1, 3};
    in.attention = {{0.2f, 0.3f, 0.5f}, {1.0f}};
    in.embed = [this] { return std::make_pair(x, torch::Tensor()); };
    in.z = [this](const torch::Tensor& points, const torch::Tensor&) { return torch::einsum("nte,kt->nk", {points, c}); };
    return in;
  }
};

/// One row of 2 units and 2 targets whose attention differs per target (an alignment's) and whose
/// probabilities with units removed are known: p_0 = 0.5 + 0.1 (kept units), p_1 = 0.2 (kept unit 0)
/// + 0.3 (kept unit 1).
models::ImportanceInputs two_targets(const torch::jit::Module& module) {
  models::ImportanceInputs in;
  in.module = module;
  in.targets = 2;
  in.width = 2;
  in.units = {2};
  in.attention = {{0.1f, 0.9f, 0.7f, 0.3f}};  // [K x units]
  in.attention_per_target = true;
  in.erased = [](const std::vector<models::Version>& versions) {
    std::vector<float> p;
    for (const auto& v : versions) {
      p.push_back(0.5f + 0.1f * static_cast<float>(v.keep[0] + v.keep[1]));
      p.push_back(0.2f * v.keep[0] + 0.3f * v.keep[1]);
    }
    return p;
  };
  return in;
}

/// Importance options asking for `methods`, integrated gradients in `steps` steps (default: the library's).
models::ImportanceOptions asking(std::vector<Method> methods, int steps = models::ImportanceOptions{}.steps) {
  models::ImportanceOptions o;
  o.methods = std::move(methods);
  o.steps = steps;
  return o;
}

}  // namespace

TEST_CASE("which methods a model gives, and what they cost", "[models][importance]") {
  CHECK(models::method_names(models::available_methods({false, false})) == "attention,leave-one-out");
  CHECK(models::method_names(models::available_methods({true, true})) ==
        "attention,gradient,grad-input,integrated-gradients,leave-one-out,attention-rollout");
  CHECK(models::importance_cost({}, 50, 6) == 0);
  CHECK(models::importance_cost({Method::kAttention}, 50, 6) == 0);
  CHECK(models::importance_cost({Method::kGradient, Method::kGradInput}, 50, 6) == 18);
  CHECK(models::importance_cost({Method::kIntegratedGradients}, 50, 6) == 3 * 6 * 50 + 2);
  CHECK(models::importance_cost({Method::kLeaveOneOut, Method::kAttentionRollout}, 50, 0) == 17);
  CHECK(models::importance_cost({Method::kLeaveOneOut}, 50, 6, 200) == 201);  // the whole input and one version per word
}

TEST_CASE("each row's scores are cut at its own positions, per target, in the order asked", "[models][importance]") {
  const torch::jit::Module module = stand_in();
  const Linear f;
  models::ImportanceOptions o = asking({Method::kIntegratedGradients, Method::kAttention, Method::kGradient, Method::kGradInput}, 4);
  const auto rows = models::importance(f.inputs(module), o);
  REQUIRE(rows.size() == 2);
  for (std::size_t b = 0; b < 2; ++b) {
    const std::int64_t first = b == 0 ? 1 : 3, n = b == 0 ? 3 : 1;
    const auto& r = rows[b];
    REQUIRE(r.methods.size() == 4);
    CHECK(models::method_name(r.methods[0].method) == std::string("integrated-gradients"));
    CHECK(models::method_name(r.methods[1].method) == std::string("attention"));
    CHECK(r.steps == 4);
    REQUIRE(r.completeness_gap.size() == 2);
    for (float gap : r.completeness_gap) CHECK(std::abs(gap) < 1e-4);  // linear: exact
    for (std::int64_t k = 0; k < 2; ++k) {
      CHECK(r.methods[1].scores[static_cast<std::size_t>(k)] == (b == 0 ? std::vector<float>{0.2f, 0.3f, 0.5f} : std::vector<float>{1.0f}));
      for (std::int64_t t = 0; t < n; ++t) {
        const float c = f.c[k][first + t].item<float>();
        const float sum = f.x[static_cast<std::int64_t>(b)][first + t].sum().item<float>();
        const auto at = [&](std::size_t m) { return r.methods[m].scores[static_cast<std::size_t>(k)][static_cast<std::size_t>(t)]; };
        CHECK(at(0) == Approx(c * sum).margin(1e-5));
        CHECK(at(2) == Approx(std::abs(c) * std::sqrt(2.0f)).margin(1e-5));
        CHECK(at(3) == Approx(c * sum).margin(1e-5));
      }
    }
  }
}

TEST_CASE("leave-one-out splits each row's scores by target, attention can differ per target", "[models][importance]") {
  const torch::jit::Module module = stand_in();
  const models::ImportanceInputs in = two_targets(module);
  models::ImportanceOptions o = asking({Method::kLeaveOneOut, Method::kAttention});
  const auto rows = models::importance(in, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].steps == 0);
  CHECK(rows[0].completeness_gap.empty());
  const auto& loo = rows[0].methods[0].scores;
  REQUIRE(loo.size() == 2);
  CHECK(loo[0][0] == Approx(0.1f));
  CHECK(loo[0][1] == Approx(0.1f));
  CHECK(loo[1][0] == Approx(0.2f));
  CHECK(loo[1][1] == Approx(0.3f));
  CHECK(rows[0].methods[1].scores == std::vector<std::vector<float>>{{0.1f, 0.9f}, {0.7f, 0.3f}});
}

TEST_CASE("each row explained for its one target: that target's scores of every method, one backward pass", "[models][importance]") {
  const torch::jit::Module module = stand_in();
  const Linear f;
  models::ImportanceOptions o = asking({Method::kAttention, Method::kGradient, Method::kGradInput, Method::kIntegratedGradients}, 4);
  const auto every = models::importance(f.inputs(module), o);
  models::ImportanceInputs in = f.inputs(module);
  in.explained = {1, 0};
  std::int64_t widths = 0;  // the gradient methods ask for one target: [N, 1], not [N, 2]
  in.z = [&f, &widths](const torch::Tensor& points, const torch::Tensor&) {
    const torch::Tensor z = torch::einsum("nte,kt->nk", {points, f.c});
    widths = std::max(widths, z.size(1));
    return z;
  };
  const auto one = models::importance(in, o);
  REQUIRE(one.size() == 2);
  for (std::size_t b = 0; b < 2; ++b) {
    const auto k = static_cast<std::size_t>(in.explained[b]);
    CHECK(one[b].target == in.explained[b]);
    CHECK(every[b].target == -1);
    REQUIRE(one[b].completeness_gap.size() == 1);
    CHECK(one[b].completeness_gap[0] == Approx(every[b].completeness_gap[k]).margin(1e-5));
    for (std::size_t m = 0; m < o.methods.size(); ++m) {
      REQUIRE(one[b].methods[m].scores.size() == 1);
      CHECK_THAT(one[b].methods[m].scores[0], Catch::Matchers::Approx(every[b].methods[m].scores[k]).margin(1e-5));
    }
  }
  CHECK(widths == 2);  // in.z still gives every target; the driver differentiates the explained one
  // Leave-one-out and per-target attention: the explained target's row of each.
  models::ImportanceInputs loo = two_targets(module);
  loo.explained = {1};
  o.methods = {Method::kLeaveOneOut, Method::kAttention};
  const auto rows = models::importance(loo, o);
  CHECK_THAT(rows[0].methods[0].scores.at(0), Catch::Matchers::Approx(std::vector<float>{0.2f, 0.3f}));
  CHECK(rows[0].methods[1].scores == std::vector<std::vector<float>>{{0.7f, 0.3f}});
  // A target per row, each one of the model's.
  loo.explained = {2};
  CHECK_THROWS_WITH(models::importance(loo, o), Catch::Contains("explained target 2 is not in 0..1"));
  loo.explained = {0, 1};
  CHECK_THROWS_WITH(models::importance(loo, o), Catch::Contains("2 explained targets for 1 rows"));
}

TEST_CASE("attention rollout is attribution's rollout of each row's own block, for every target", "[models][importance]") {
  const torch::jit::Module module = stand_in();
  const torch::Tensor layer = torch::softmax(torch::arange(2 * 1 * 3 * 3, torch::kFloat32).view({2, 1, 3, 3}) / 5, -1);
  models::ImportanceInputs in;
  in.module = module;
  in.targets = 2;
  in.width = 3;
  in.units = {2, 0};
  in.first = {1, 3};
  in.attention = {{0.4f, 0.6f}, {}};
  in.self_attention = [&] { return std::vector<torch::Tensor>{layer}; };
  models::ImportanceOptions o = asking({Method::kAttentionRollout});
  const auto rows = models::importance(in, o);
  const auto expected = models::attention_rollout({layer[0].slice(1, 1, 3).slice(2, 1, 3)}, torch::tensor({0.4f, 0.6f}));
  CHECK(rows[0].methods[0].scores == std::vector<std::vector<float>>{expected, expected});
  CHECK(rows[1].methods[0].scores == std::vector<std::vector<float>>{{}, {}});  // a row of no units
}

TEST_CASE("no targets or no units: no rows, nothing run, a method without its hook is refused", "[models][importance]") {
  const torch::jit::Module module = stand_in();
  models::ImportanceInputs in;
  in.module = module;
  in.targets = 0;
  in.width = 5;
  in.units = {5};
  in.attention = {{}};
  in.embed = []() -> std::pair<torch::Tensor, torch::Tensor> { throw std::logic_error("must not run"); };
  in.z = [](const torch::Tensor&, const torch::Tensor&) -> torch::Tensor { throw std::logic_error("must not run"); };
  in.erased = [](const std::vector<models::Version>&) -> std::vector<float> { throw std::logic_error("must not run"); };
  models::ImportanceOptions o = asking({Method::kIntegratedGradients, Method::kLeaveOneOut});
  auto rows = models::importance(in, o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].steps == models::kDefaultSteps);
  CHECK(rows[0].methods.size() == 2);
  CHECK(rows[0].methods[0].scores.empty());
  CHECK(rows[0].completeness_gap.empty());
  in.targets = 3;
  in.width = 0;
  CHECK(models::importance(in, o)[0].methods[1].scores.empty());
  in.units.clear();
  CHECK(models::importance(in, o).empty());
  models::ImportanceInputs bare;
  bare.module = module;
  bare.targets = 1;
  bare.width = 1;
  bare.units = {1};
  bare.attention = {{1.0f}};
  o.methods = {Method::kGradient};
  CHECK_THROWS_WITH(models::importance(bare, o), Catch::Contains("cannot give gradient"));
  o.methods = {Method::kAttentionRollout};
  CHECK_THROWS_WITH(models::importance(bare, o), Catch::Contains("cannot give attention-rollout"));
  o.methods = {Method::kRandom};
  CHECK_THROWS_WITH(models::importance(bare, o), Catch::Contains("faithfulness's floor"));
}

TEST_CASE("gradients are taken without changing the model (threads share it): its parameters keep requires_grad, get no .grad",
          "[models][importance]") {
  torch::jit::Module module = stand_in();
  const Linear f;
  models::ImportanceInputs in = f.inputs(module);
  bool changed_inside = false;
  in.z = [&](const torch::Tensor& points, const torch::Tensor&) {
    const torch::Tensor w = module.attr("w").toTensor();
    changed_inside = changed_inside || !w.requires_grad();
    return torch::einsum("nte,kt->nk", {points, f.c}) * (w.sum() / 2);  // w on the path: 1 as it stands
  };
  models::ImportanceOptions o = asking({Method::kGradInput, Method::kIntegratedGradients}, 4);
  const auto rows = models::importance(in, o);
  CHECK_FALSE(changed_inside);
  const torch::Tensor w = module.attr("w").toTensor();
  CHECK(w.requires_grad());
  CHECK_FALSE(w.grad().defined());
  // The inputs' gradients as without the parameter: row 1's one unit at position 3, target 0.
  CHECK(rows[1].methods[0].scores[0][0] == Approx(4.0f * (1.4f + 1.5f)));
}
