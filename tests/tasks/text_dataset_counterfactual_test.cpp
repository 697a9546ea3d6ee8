// Counterfactual logit pairing's data (tasks/text_dataset_counterfactual.cpp): a copy of each
// training row naming a term, the term swapped; the copies in a batch and in the loss; kept for
// --resume; none for validation rows; a damaged copies file refused by name.
#include <cmath>

#include <torch/script.h>

#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "tasks/classifier.h"
#include "tasks/text_dataset.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("counterfactual copies: one per row naming a term, in the batch, in the loss, kept for --resume", "[tasks][text][bias]") {
  const auto dir = scratch("counterfactual");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic",
                                    {"a,the muslim said hello,0", "b,you are stupid,1", "c,Christians and MUSLIMS,1", "d,a good friend,0"});
  const std::string terms = (dir / "terms.txt").string();
  io::write_file_atomic(terms, "muslim\nchristian\n");
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto data = task.open(
      train_inputs(
          task,
          {{"csv", csv}, {"labels", "toxic"}, {"counterfactual", "true"}, {"counterfactual-terms", terms}, {"counterfactual-weight", "3"}}),
      entry, (dir / "run").string(), 1);
  const std::string data_dir = (dir / "run" / "data").string();
  CHECK(nlohmann::json::parse(io::read_file(data_dir + "/prepare.json"))["counterfactual"]["rows_with_a_copy"] == 2);
  const tasks::CounterfactualTexts copies = tasks::read_counterfactuals(data_dir + "/counterfactuals.json", 4);
  REQUIRE(copies.rows == std::vector<std::int64_t>{0, 2});
  CHECK(copies.texts[0] == "the christian said hello");  // two terms: the other one is the only swap
  CHECK((copies.texts[1] == "Muslims and MUSLIMS" || copies.texts[1] == "Christians and CHRISTIANS"));
  CHECK(data->data_config().at("counterfactual_weight") == 3);

  // A batch carries the copies of its rows that have one, and where those rows are in it.
  const tasks::Batch b = data->batch({3, 2, 1, 0}, tasks::Width::kLongestRow);
  REQUIRE(b.counterfactual_rows.defined());
  CHECK(std::vector<std::int64_t>(b.counterfactual_rows.data_ptr<std::int64_t>(), b.counterfactual_rows.data_ptr<std::int64_t>() + 2) ==
        std::vector<std::int64_t>{1, 3});
  CHECK(b.counterfactual_inputs.size(0) == 2);
  CHECK_FALSE(data->batch({1, 3}, tasks::Width::kLongestRow).counterfactual_inputs.defined());

  // The loss: the rows' cross-entropy plus lambda x the pairs' mean logit gap over the batch's rows.
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module model = entry.build(config, nn::Runtime::kNative);
  model.eval();
  models::TextClassifier classifier(model);
  const torch::Tensor z = classifier.logits(b.inputs.at(0).toTensor()).scores;
  const torch::Tensor zc = classifier.logits(b.counterfactual_inputs).scores;
  double gap = 0;
  for (std::int64_t i = 0; i < 2; ++i)
    gap += std::abs(z[b.counterfactual_rows[i].item<std::int64_t>()][0].item<double>() - zc[i][0].item<double>());
  const double plain = tasks::binary_loss(z, b.targets, {}, {}).value.item<double>();
  CHECK(gap > 0);
  CHECK(data->loss(model, b, {}).value.item<double>() == Approx(plain + 3 * gap / 4).epsilon(1e-5));

  // A resumed run reads the same copies; validation rows get none.
  io::write_file_atomic((dir / "run" / "tokenizer.json").string(), data->files().at("tokenizer.json"));
  const auto again = task.reopen(data->data_config(), (dir / "run").string(), 1);
  CHECK(torch::equal(again->batch({3, 2, 1, 0}, tasks::Width::kLongestRow).counterfactual_inputs, b.counterfactual_inputs));
  const auto val = task.open_validation(csv, *data, (dir / "run").string(), 1);
  CHECK_FALSE(val->batch({0, 1, 2, 3}, tasks::Width::kLongestRow).counterfactual_inputs.defined());
  CHECK_FALSE(val->data_config().contains("counterfactual_weight"));

  // A damaged copies file is refused by its name.
  const std::string bad = (dir / "bad.json").string();
  io::write_file_atomic(bad, R"({"rows": [[5, "x"]]})");
  CHECK_THROWS_WITH(tasks::read_counterfactuals(bad, 4), Catch::Contains(bad) && Catch::Contains("row 5"));
  io::write_file_atomic(bad, R"({"rows": [[1, 2]]})");
  CHECK_THROWS_WITH(tasks::read_counterfactuals(bad, 4), Catch::Contains(bad) && Catch::Contains("not the counterfactual copies"));
}
