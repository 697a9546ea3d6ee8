// Bias-aware training (tasks/text_dataset_weights.cpp): row weights from a weight column and the
// identity columns, auxiliary labels, bad flags and columns refused.
#include <algorithm>
#include <cmath>

#include <torch/script.h>

#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("bias-aware training: a weight column times the identity weights, scaled to mean 1, in the loss and kept for --resume",
          "[tasks][text][bias]") {
  const auto dir = scratch("row_weights");
  // Rows: a background negative, a background positive, a subgroup positive (muslim), a subgroup
  // negative (christian), a row annotated below 0.5 (background), one not annotated (background).
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic,insult,w,muslim,christian",
                                    {"a,thanks for the edit,0,0,1,0,0", "b,you are stupid,1,1,2,0.0,0.0", "c,stupid muslim,1,0,1,1,0",
                                     "d,a christian friend,0,0,0.5,0,1.0", "e,see the page,0,0,1,0.4,0", "f,you idiot,1,1,1,,"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto open = [&](std::vector<std::pair<std::string, std::string>> flags, const std::string& run = "run") {
    flags.insert(flags.end(), {{"csv", csv}, {"labels", "toxic"}});
    return task.open(train_inputs(task, flags), entry, (dir / run).string(), 1);
  };
  const auto weights_of = [](const tasks::Batch& b) {
    REQUIRE(b.row_weights.defined());
    return std::vector<float>(b.row_weights.data_ptr<float>(), b.row_weights.data_ptr<float>() + b.row_weights.numel());
  };
  const std::vector<std::int64_t> all = {0, 1, 2, 3, 4, 5};
  // Identity weights by the formula: 1, 2 (background positive), 2 (subgroup positive), 3 (subgroup
  // negative), 1, 2; times the column: 1, 4, 2, 1.5, 1, 2 (sum 11.5), scaled to mean 1.
  const auto data = open({{"weight-column", "w"}, {"identity-weighting", "true"}, {"identities", "muslim,christian"}});
  const std::vector<float> w = weights_of(data->batch(all, tasks::Width::kLongestRow));
  const std::vector<double> want = {1, 4, 2, 1.5, 1, 2};
  for (std::size_t r = 0; r < 6; ++r) CHECK(w[r] == Approx(want[r] * 6 / 11.5));
  const auto report = nlohmann::json::parse(io::read_file((dir / "run" / "data" / "prepare.json").string()))["row_weights"];
  CHECK(report["column"] == "w");
  CHECK(report["identity_weighting"]["subgroup_negatives"] == 1);
  CHECK(report["identity_weighting"]["subgroup_positives"] == 1);
  CHECK(report["identity_weighting"]["background_positives"] == 2);
  CHECK(report["identity_weighting"]["background_negatives"] == 2);
  // The identity columns by default: the 2019 competition's the file has (muslim, christian).
  const auto by_default = open({{"identity-weighting", "true"}}, "run2");
  const std::vector<float> iw = weights_of(by_default->batch(all, tasks::Width::kLongestRow));
  const std::vector<double> formula = {1, 2, 2, 3, 1, 2};
  for (std::size_t r = 0; r < 6; ++r) CHECK(iw[r] == Approx(formula[r] * 6 / 11));
  // The loss: the mean over rows of w_r x the row's binary cross-entropy.
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module model = entry.build(config, nn::Runtime::kNative);
  model.eval();
  const tasks::Batch b = data->batch({1, 3, 4}, tasks::Width::kLongestRow);
  const torch::Tensor logits = models::TextClassifier(model).logits(b.inputs.at(0).toTensor()).scores;
  double by_hand = 0;
  for (std::int64_t i = 0; i < 3; ++i) {
    const double z = logits[i][0].item<double>(), y = b.targets[i][0].item<double>(), p = 1 / (1 + std::exp(-z));
    by_hand += b.row_weights[i].item<double>() * -(y * std::log(p) + (1 - y) * std::log(1 - p)) / 3;
  }
  CHECK(data->loss(model, b, {}).value.item<double>() == Approx(by_hand).epsilon(1e-5));
  // A resumed run reads the same weights.
  io::write_file_atomic((dir / "run" / "tokenizer.json").string(), data->files().at("tokenizer.json"));
  const auto again = task.reopen(data->data_config(), (dir / "run").string(), 1);
  CHECK(weights_of(again->batch(all, tasks::Width::kLongestRow)) == w);
  // Validation rows are not weighted.
  const auto val = task.open_validation(csv, *data, (dir / "run").string(), 1);
  CHECK_FALSE(val->batch(all, tasks::Width::kLongestRow).row_weights.defined());
  CHECK_FALSE(open({}, "run3")->batch(all, tasks::Width::kLongestRow).row_weights.defined());
}

TEST_CASE("bias-aware training: auxiliary labels are outputs, reported apart, not scored", "[tasks][text][bias]") {
  const auto dir = scratch("aux_labels");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic,insult",
                                    {"a,thanks for the edit,0,0", "b,you are stupid,1,1", "c,stupid muslim,1,0", "d,a friend,0,1"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto data =
      task.open(train_inputs(task, {{"csv", csv}, {"labels", "toxic"}, {"aux-labels", "insult"}}), entry, (dir / "run").string(), 1);
  CHECK(data->sizes().labels == 2);  // an output per label, the auxiliary ones included
  CHECK(data->data_config().at("aux_labels") == nlohmann::json::array({"insult"}));
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module model = entry.build(config, nn::Runtime::kNative);
  const tasks::Evaluation e = data->evaluate(model, {0, 1, 2, 3}, {});
  CHECK(e.metrics.at("auc").size() == 1);  // toxic only
  CHECK(e.metrics.at("auc").contains("toxic"));
  CHECK(e.metrics.at("aux_auc").size() == 1);
  CHECK(e.metrics.at("aux_auc").contains("insult"));
  CHECK(e.metrics.at("aux_mean_auc") == e.metrics.at("aux_auc").at("insult"));
}

TEST_CASE("bias-aware training: bad flags and columns refused, naming them", "[tasks][text][bias]") {
  const auto dir = scratch("row_weights_bad");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic,w,muslim", {"a,thanks,0,1,0", "b,you are stupid,1,-2,1"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto open = [&](std::vector<std::pair<std::string, std::string>> flags) {
    if (std::none_of(flags.begin(), flags.end(), [](const auto& f) { return f.first == "data"; })) flags.push_back({"csv", csv});
    if (std::none_of(flags.begin(), flags.end(), [](const auto& f) { return f.first == "label-column"; }))
      flags.push_back({"labels", "toxic"});
    return task.open(train_inputs(task, flags), entry, (dir / "run").string(), 1);
  };
  CHECK_THROWS_WITH(open({{"weight-column", "w"}}), Catch::Contains("train.csv:3: column 4 (w): a weight must be a number >= 0, got '-2'"));
  CHECK_THROWS_WITH(open({{"weight-column", "weight"}}), Catch::Contains("weight"));
  CHECK_THROWS_WITH(open({{"identities", "muslim"}}), Catch::Contains("--identities applies with --identity-weighting"));
  CHECK_THROWS_WITH(open({{"identity-weighting", "true"}, {"identities", "jewish"}}), Catch::Contains("jewish"));
  CHECK_THROWS_WITH(open({{"aux-labels", "toxic"}}), Catch::Contains("--aux-labels: 'toxic' is one of --labels"));
  CHECK_THROWS_WITH(open({{"aux-labels", "w,w"}}), Catch::Contains("--aux-labels: 'w' is named twice"));
  CHECK_THROWS_WITH(open({{"label-column", "toxic"}, {"aux-labels", "w"}}), Catch::Contains("one class per row"));
  CHECK_THROWS_WITH(open({{"label-column", "toxic"}, {"identity-weighting", "true"}}), Catch::Contains("one class per row"));
  const std::string plain = write_csv(dir / "plain.csv", "id,comment_text,toxic", {"a,thanks,0", "b,you are stupid,1"});
  CHECK_THROWS_WITH(task.open(train_inputs(task, {{"csv", plain}, {"labels", "toxic"}, {"identity-weighting", "true"}}), entry,
                              (dir / "run2").string(), 1),
                    Catch::Contains("--identity-weighting") && Catch::Contains("plain.csv"));
  CHECK_THROWS_WITH(open({{"data", (dir / "run" / "data").string()}, {"weight-column", "w"}}), Catch::Contains("not --data"));
}
