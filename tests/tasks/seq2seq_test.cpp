// Sequence to sequence: one scoring path for evaluate, shared or not; its settings checked.
// (What training learns, seed 003's toy, is in tests/train/run_evaluate_test.cpp.)
#include <cmath>

#include "attn/tasks/seq2seq.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("seq2seq: evaluate decodes a CSV, bad settings are usage errors", "[tasks][seq2seq][evaluate]") {
  const fs::path dir = scratch("s2s_eval");
  std::vector<std::string> rows;
  for (int i = 0; i < 200; ++i) rows.push_back(std::to_string(i) + "," + std::to_string(i * 7 % 1000));
  const std::string csv = write_csv(dir / "numbers.csv", "n,m", rows);
  saved_model("seq2seq-attention", dir / "run", {{"csv", csv}, {"source-column", "n"}, {"target-column", "m"}},
              {{"units", 8}, {"embed_dim", 4}});
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs none;
  const auto data = model->open_csv(write_csv(dir / "val.csv", "n,m", std::vector<std::string>(rows.end() - 50, rows.end())), none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {5, tasks::EvaluateOptions::Detail::kFull});
  CHECK(e.metrics.at("rows") == 50);
  // Shared by workers, each decoding its share of the batches, the same bits, outputs included
  // (tests/apps/evaluate_distributed_test.py checks it across real processes, with beam search).
  check_shared_as_alone(*data, (dir / "run").string(), tasks::all_rows(data->rows()), 5, e);
  CHECK_THAT(e.predictions_csv, Catch::StartsWith("source,target,prediction\n\"150\",\"50\","));
  data::Inputs beam;
  beam.set("beam", "0", data::Inputs::Origin::kGiven);
  CHECK_THROWS_AS(model->configure(beam), std::invalid_argument);
  tasks::ExplainOptions o;
  o.label = "x";
  CHECK_THROWS_WITH(model->explain({{"1", {}}}, 8, o), Catch::Contains("--label"));
  fs::remove_all(dir);
}
