// Feature classification: one scoring path for validation and evaluate; explain's inputs.
#include <cmath>
#include <sstream>

#include "attn/data/synthetic.h"
#include "attn/tasks/feature_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("features: evaluate scores a CSV in one pass, the same shared by two workers, explain's inputs", "[tasks][features][evaluate]") {
  const fs::path dir = scratch("features_eval");
  const auto [header, rows] = generated_features(1000, 4, "1");
  saved_model("feature-attention", dir / "run", {{"csv", write_csv(dir / "f.csv", header, rows)}});
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs none;
  const auto data = model->open_csv(write_csv(dir / "val.csv", header, std::vector<std::string>(rows.end() - 300, rows.end())), none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {64, tasks::EvaluateOptions::Detail::kFull});
  CHECK(e.metrics.at("rows") == 300);
  CHECK(e.metrics.at("auc").is_object());
  // Shared by two workers, each scoring its share of the batches: the same bits, picture included.
  check_shared_as_alone(*data, (dir / "run").string(), tasks::all_rows(data->rows()), 64, e);
  REQUIRE(e.svg.size() == 1);
  CHECK_THAT(e.svg[0], Catch::Contains("Mean attention per feature"));
  CHECK_THAT(e.predictions_csv, Catch::StartsWith("row,probability,prediction\n1,"));

  // explain's inputs: VALUE,... arguments or --csv with --rows; bad ones are usage errors.
  auto in = model->read_inputs({"1,2,3,4", "0,0,0,-1.5"}, none, nullptr);
  REQUIRE(in.size() == 2);
  CHECK(in[1].values == std::vector<float>{0, 0, 0, -1.5f});
  const auto ex = model->explain(in);
  CHECK(ex->json(0).at("features").size() == 4);
  const auto predicted = model->predict(in, 1);
  CHECK(predicted[1].at("probability").get<double>() == Approx(ex->json(1).at("probability").get<double>()).margin(1e-6));
  CHECK_THROWS_AS(model->read_inputs({"1,2"}, none, nullptr), std::invalid_argument);
  CHECK_THROWS_WITH(model->read_inputs({"1,2,x,4"}, none, nullptr), Catch::Contains("'x' in '1,2,x,4' is not a number"));
  data::Inputs from_csv;
  from_csv.set("csv", (dir / "val.csv").string(), data::Inputs::Origin::kGiven);
  from_csv.set("rows", "2,300", data::Inputs::Origin::kGiven);
  CHECK(model->read_inputs({}, from_csv, nullptr).size() == 2);
  from_csv.set("rows", "301", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(model->read_inputs({}, from_csv, nullptr), Catch::Contains("row 301 is not in 1..300"));

  // Importance over features against the training mean: the baseline recorded in the model file,
  // leave-one-out by setting each feature to it, integrated gradients complete, grad-input by
  // finite differences of the logit.
  std::vector<double> sums(4, 0.0);
  for (const std::string& r : rows) {
    std::istringstream fields(r);
    std::string v;
    for (int f = 0; f < 4 && std::getline(fields, v, ','); ++f) sums[static_cast<std::size_t>(f)] += std::stod(v);
  }
  tasks::ExplainOptions o;
  using M = models::Method;
  o.methods = {M::kAttention, M::kGradient, M::kGradInput, M::kIntegratedGradients, M::kLeaveOneOut};
  const tasks::Input row{"", {1.0f, -0.5f, 2.0f, 0.25f}};
  const auto explained = model->explain({row}, 64, o);
  const auto j = explained->json(0);
  CHECK(j.at("baseline_kind") == "training mean");
  for (std::size_t f = 0; f < 4; ++f)
    CHECK(j.at("baseline")[f].get<double>() == Approx(sums[f] / static_cast<double>(rows.size())).margin(1e-4));
  const std::vector<float> baseline = j.at("baseline");
  const auto p_of = [&](std::vector<float> values) {
    return model->predict({{"", std::move(values)}}, 1)[0].at("probability").get<double>();
  };
  const auto z_of = [&](const std::vector<float>& values) {
    const double p = p_of(values);
    return std::log(p / (1 - p));
  };
  const auto& imp = j.at("importance");
  double integrated = 0;
  for (std::size_t f = 0; f < 4; ++f) {
    INFO("feature " << f);
    std::vector<float> removed = row.values;
    removed[f] = baseline[f];
    CHECK(imp.at("leave-one-out").at("label")[f].get<double>() == Approx(p_of(row.values) - p_of(removed)).margin(1e-6));
    std::vector<float> up = row.values, down = row.values;
    up[f] += 1e-2f;
    down[f] -= 1e-2f;
    const double dz = (z_of(up) - z_of(down)) / 2e-2;
    CHECK(imp.at("grad-input").at("label")[f].get<double>() == Approx(dz * (row.values[f] - baseline[f])).margin(2e-3).epsilon(2e-2));
    CHECK(imp.at("gradient").at("label")[f].get<double>() == Approx(std::abs(dz)).margin(2e-3).epsilon(2e-2));
    integrated += imp.at("integrated-gradients").at("label")[f].get<double>();
  }
  CHECK(integrated == Approx(z_of(row.values) - z_of(baseline)).margin(1e-3));
  CHECK(std::abs(j.at("integrated_gradients").at("completeness_gap").at("label").get<double>()) < 1e-3);
  CHECK_THROWS_WITH(model->explain({row}, 64,
                                   [&] {
                                     auto bad = o;
                                     bad.label = "spam";
                                     return bad;
                                   }()),
                    Catch::Contains("--label: 'spam'"));
  fs::remove_all(dir);
}
