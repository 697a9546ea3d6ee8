// Feature classification: one scoring path for validation and evaluate; explain's inputs.
#include <cmath>
#include <sstream>

#include "attn/data/synthetic.h"
#include "attn/tasks/feature_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("features: evaluate on a run's validation rows reproduces its last validation metrics", "[tasks][features][evaluate]") {
  const fs::path dir = scratch("features_eval");
  data::GenerateRequest g;
  g.kind = "features";
  g.rows = 1000;
  g.dims = 4;
  g.informative = "1";
  std::istringstream lines(data::generate(g));
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  const auto last = train_run("feature-attention", (dir / "run").string(), {{"csv", write_csv(dir / "f.csv", header, rows)}}, {},
                          {{"epochs", 4}, {"batch_size", 64}, {"lr", 0.01}, {"seed", 1}});
  const auto model = tasks::open_model((dir / "run").string());
  CHECK(model->saved().config.at("training").at("val_split") == 0.3);  // the seed's recipe, from the registry
  data::Inputs none;
  const auto data = model->open_csv(write_csv(dir / "val.csv", header, std::vector<std::string>(rows.end() - 300, rows.end())), none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {1000, tasks::EvaluateOptions::Detail::kFull});
  for (const char* key : {"loss", "accuracy", "mean_auc"})
    CHECK(std::abs(e.metrics.at(key).get<double>() - last.at(std::string("val_") + key).get<double>()) <= 1e-6);
  CHECK(e.metrics.at("auc").is_object());
  bool same = false;  // shared by two workers, each scoring half the rows
  const auto shared = shared_metrics(*data, (dir / "run").string(), tasks::all_rows(data->rows()), 1000, &same);
  CHECK(same);
  for (const char* key : {"loss", "accuracy", "mean_auc"})
    CHECK(std::abs(shared.at(key).get<double>() - e.metrics.at(key).get<double>()) <= 1e-6);
  CHECK(std::abs(shared.at("mean_attention").at("x1").get<double>() - e.metrics.at("mean_attention").at("x1").get<double>()) <= 1e-6);
  CHECK(std::abs(e.metrics.at("mean_attention").at("x1").get<double>() - last.at("val_mean_attention").at("x1").get<double>()) <= 1e-6);
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
  fs::remove_all(dir);
}
