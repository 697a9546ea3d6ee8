// Text classifiers' data (tasks/text_dataset.h): a hierarchical model's documents of sentences read
// from the data, recorded, and applied to what the model reads after.
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("a hierarchical model's data: sentences from the data, recorded, applied by evaluate and predict, flags checked",
          "[tasks][text][sentences]") {
  const auto dir = scratch("sentences");
  std::vector<std::string> rows;
  for (int i = 0; i < 40; ++i)
    rows.push_back("d" + std::to_string(i) + ",\"Thanks for the edit. The page is fine" + (i % 3 == 0 ? ". You are stupid" : "") +
                   ".\nSee the talk page.\"," + (i % 3 == 0 ? "1" : "0"));
  const std::string csv = write_csv(dir / "docs.csv", "id,comment_text,bad", rows);
  const std::string run =
      saved_model("hierarchical-attention", dir / "run", {{"csv", csv}, {"labels", "bad"}}, {{"embed_dim", 8}, {"gru_units", 4}});
  const auto model = tasks::open_model(run);
  const auto described = model->describe();
  REQUIRE(described.contains("sentences"));
  CHECK(described["sentences"]["max_sentences"] == 4);  // numpy.percentile([3]*26 + [4]*14, 95) = 4
  CHECK(described["sentences"]["max_words"] == 4);      // every sentence has 3 or 4 words
  CHECK(described["maxlen"] == 16);
  data::Inputs none;
  const auto scored = model->open_csv(csv, none, 1);
  const auto evaluation = scored->evaluate(model->module(), tasks::all_rows(scored->rows()), {});
  const auto predicted = model->predict({{"Thanks for the edit. You are stupid.", {}}}, 8);
  const auto explained = model->explain({{"Thanks for the edit. You are stupid.", {}}}, 8)->json(0);
  CHECK(predicted[0]["probabilities"]["bad"].get<double>() == Approx(explained["probabilities"]["bad"].get<double>()).margin(1e-6));
  CHECK(explained["sentences"].size() == 2);
  CHECK(evaluation.metrics["rows"] == 40);
  // --max-sentences is a hierarchical model's setting; --data has no texts to split.
  const tasks::Task& task = tasks::text_classification();
  data::Inputs in;
  in.set("csv", csv, data::Inputs::Origin::kGiven);
  in.set("max-sentences", "3", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(task.open(in, models::find_model("bilstm-attention"), (dir / "x").string(), 1), Catch::Contains("hierarchical models"));
  data::Inputs prepared;
  prepared.set("data", (dir / "run" / "data").string(), data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(task.open(prepared, models::find_model("hierarchical-attention"), (dir / "y").string(), 1), Catch::Contains("--csv"));
}
