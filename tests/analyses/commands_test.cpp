// The model commands as library calls (commands.cpp): what explain, evaluate, export, models and
// summary return and write, on a small model file of every kind the registry has a task for.
#include "attn/analyses/commands.h"
#include "../tasks/tasks_test_util.h"
#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"

using namespace attn;
using namespace tasks_test;

namespace {

/// A small feature-attention run on rows "a,b,label" (label = a > b).
std::string feature_run(const fs::path& dir) {
  std::vector<std::string> rows;
  for (int i = 0; i < 120; ++i)
    rows.push_back(std::to_string(i % 7 * 0.1) + "," + std::to_string(i % 5 * 0.1) + "," + (i % 7 > i % 5 ? "1" : "0"));
  const std::string csv = write_csv(dir / "f.csv", "a,b,label", rows);
  saved_model("feature-attention", dir / "run", {{"csv", csv}});
  return csv;
}

data::Inputs given(const std::vector<std::pair<std::string, std::string>>& values) {
  data::Inputs in;
  for (const auto& [k, v] : values) in.set(k, v, data::Inputs::Origin::kGiven);
  return in;
}

}  // namespace

TEST_CASE("commands: explain prints a block or a JSON line per input and writes the pictures", "[tasks][commands]") {
  const fs::path dir = scratch("commands_explain");
  feature_run(dir);
  const std::string run = (dir / "run").string();
  analyses::ExplainRequest r;
  r.model = run;
  r.arguments = {"0.5,0.1", "0.0,0.4"};
  r.format = analyses::ExplainRequest::Format::kJson;
  r.html = (dir / "page.html").string();
  const std::string json = analyses::explain(r, nullptr);
  CHECK(std::count(json.begin(), json.end(), '\n') == 2);
  const auto first = nlohmann::json::parse(json.substr(0, json.find('\n')));
  CHECK(first.at("features").size() == 2);
  CHECK(first.at("probability").get<double>() >= 0.0);
  CHECK_THAT(io::read_file((dir / "page.html").string()), Catch::Contains("<html"));
  r.format = analyses::ExplainRequest::Format::kText;
  r.html.clear();
  r.options = given({{"svg", (dir / "row.svg").string()}});
  CHECK_THAT(analyses::explain(r, nullptr), Catch::Contains("P(label = 1) = ") && Catch::Contains("weight"));
  CHECK_THAT(io::read_file((dir / "row.svg").string()), Catch::StartsWith("<svg"));
  r.arguments.clear();  // a feature model's rows come as arguments or from a CSV, not from stdin
  CHECK_THROWS_WITH(analyses::explain(r, [] { return std::vector<std::string>{"0.3,0.3"}; }), Catch::Contains("VALUE,VALUE"));
  fs::remove_all(dir);
}

TEST_CASE("commands: evaluate scores a CSV with validation's code and writes predictions and metrics", "[tasks][commands]") {
  const fs::path dir = scratch("commands_evaluate");
  const std::string csv = feature_run(dir);
  analyses::EvaluateRequest r;
  r.model = (dir / "run").string();
  r.csv = csv;
  r.predictions = (dir / "p.csv").string();
  r.metrics = (dir / "m.json").string();
  const std::string out = analyses::evaluate(r);
  CHECK_THAT(out, Catch::StartsWith("scored 120 rows of " + csv));
  const auto metrics = nlohmann::json::parse(io::read_file(r.metrics));
  CHECK(metrics.at("csv") == csv);
  CHECK(metrics.at("rows") == 120);
  for (const char* key : {"loss", "accuracy", "mean_auc"}) CHECK(metrics.at(key).is_number());
  const std::string predictions = io::read_file(r.predictions);
  CHECK(std::count(predictions.begin(), predictions.end(), '\n') == 121);  // a header and a line per row
  r.batch_size = 0;
  CHECK_THROWS_AS(analyses::evaluate(r), std::invalid_argument);
  fs::remove_all(dir);
}

TEST_CASE("commands: export writes one loadable file, models and summary describe the registry", "[tasks][commands]") {
  const fs::path dir = scratch("commands_export");
  feature_run(dir);
  const std::string to = (dir / "exported.pt").string();
  CHECK_THAT(analyses::export_model((dir / "run").string(), to), Catch::Contains("wrote " + to + " (feature-attention)"));
  CHECK_NOTHROW(tasks::open_model(to));
  CHECK_THAT(analyses::summarize("bilstm-attention", nlohmann::json::object()), Catch::Contains("Total params: 2,666,567"));
  for (const auto& entry : models::models())
    CHECK_THAT(analyses::summarize(entry.name, nlohmann::json::object()), Catch::Contains("Total params: "));
  CHECK_THAT(analyses::summarize((dir / "run").string(), nlohmann::json::object()), Catch::Contains("Total params:"));
  CHECK_THROWS_WITH(analyses::export_model((dir / "none").string(), to), Catch::Contains("no such file"));
  fs::remove_all(dir);
}
