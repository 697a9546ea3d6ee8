// The importance methods' one list (models/methods.h): names parsed and checked against what a
// model gives, every error naming the flag and the choices.
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/models/methods.h"

using namespace attn;
using models::Method;

TEST_CASE("method names: parsed, then checked against what a model gives, errors name the flag and the choices", "[models][methods]") {
  CHECK(models::method_names(models::parse_method_list("integrated-gradients,attention,attention", "--method")) ==
        "integrated-gradients,attention");
  CHECK_THROWS_WITH(models::parse_method_list("shap", "--method"),
                    Catch::Contains("--method: unknown method 'shap'") && Catch::Contains("integrated-gradients"));
  CHECK_THROWS_WITH(models::parse_method_list("", "--method"), Catch::Contains("no method given"));
  CHECK_THROWS_AS(models::parse_method_list("attention,", "--method"), std::invalid_argument);
  CHECK(models::method_name(models::parse_method("leave-one-out", "field \"methods\"")) == std::string("leave-one-out"));
  CHECK_THROWS_WITH(models::parse_method("lime", "field \"methods\""), Catch::Contains("field \"methods\": unknown method 'lime'"));
  const std::vector<Method> text = {Method::kAttention, Method::kGradient, Method::kIntegratedGradients, Method::kLeaveOneOut};
  CHECK(models::method_names(models::check_available({Method::kLeaveOneOut, Method::kAttention, Method::kLeaveOneOut}, text, "--method")) ==
        "leave-one-out,attention");
  CHECK_THROWS_WITH(
      models::check_available({Method::kAttentionRollout}, text, "--method"),
      Catch::Contains("cannot give 'attention-rollout'") && Catch::Contains("attention,gradient,integrated-gradients,leave-one-out"));
  CHECK_THROWS_WITH(models::check_available({}, text, "--method"), Catch::Contains("no method given"));
  for (const auto& m : models::all_methods()) CHECK(models::method_name(m.method) == std::string(m.name));
  CHECK(models::kDefaultSteps >= 1);
  CHECK(models::kDefaultSteps <= models::kMaxSteps);
}
