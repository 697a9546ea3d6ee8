// What the classifier tasks share: positive weights, the loss, thresholds checked up front, the
// metrics and the predictions CSV's two layouts.
#include <torch/torch.h>

#include "tasks/classifier.h"
#include "tasks_test_util.h"

using namespace attn;

TEST_CASE("positive weights: negatives / positives per label over the training rows, or given", "[tasks][classifier]") {
  // two labels, four rows: label 0 positive once, label 1 positive three times
  const std::vector<float> y = {1, 1, 0, 1, 0, 1, 0, 0};
  const torch::Tensor w = tasks::positive_weights_of("auto", y, 2, {0, 1, 2, 3});
  CHECK(w[0].item<float>() == Approx(3.0));
  CHECK(w[1].item<float>() == Approx(1.0 / 3));
  CHECK(tasks::positive_weights_of("auto", y, 2, {2, 3})[0].item<float>() == 1.0f);  // never positive: unweighted
  CHECK(tasks::positive_weights_of("2,0.5", y, 2, {0})[1].item<float>() == 0.5f);
  CHECK_FALSE(tasks::positive_weights_of("", y, 2, {0}).defined());
  CHECK_THROWS_WITH(tasks::positive_weights_of("2", y, 2, {0}), Catch::Contains("1 weights for 2 labels"));
  CHECK_THROWS_WITH(tasks::positive_weights_of("-1,1", y, 2, {0}), Catch::Contains("'-1' is not a positive number"));
}

TEST_CASE("binary loss: cross-entropy of logits, Keras' binary accuracy at logit 0", "[tasks][classifier]") {
  const torch::Tensor logits = torch::tensor({2.0f, -1.0f, 0.5f, -3.0f}).view({2, 2}),
                      y = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f}).view({2, 2});
  const tasks::Loss l = tasks::binary_loss(logits, y, {});
  CHECK(l.value.item<float>() == Approx(torch::binary_cross_entropy_with_logits(logits, y).item<float>()));
  CHECK(l.accuracy == Approx(0.75));  // the 0.5 logit of a 0 label is wrong
  CHECK(tasks::binary_loss(logits, y, torch::tensor({4.0f, 1.0f})).value.item<float>() > l.value.item<float>());
}

TEST_CASE("thresholds: 0.5 unless given, a bad spec refused before any work", "[tasks][classifier]") {
  data::Inputs none, given;
  CHECK(tasks::Thresholds(none, 6).spec() == "0.5");
  given.set("thresholds", "0.3,0.7", data::Inputs::Origin::kGiven);
  CHECK(tasks::Thresholds(given, 2).spec() == "0.3,0.7");
  CHECK_THROWS_AS(tasks::Thresholds(given, 6), std::invalid_argument);
}

TEST_CASE("classifier metrics and the predictions CSV: Kaggle's layout, and the one-label layout", "[tasks][classifier]") {
  const std::vector<float> p = {0.9f, 0.2f, 0.1f, 0.6f}, y = {1, 0, 0, 1};
  const auto full = tasks::classifier_metrics(p, y, {}, {"a", "b"}, tasks::EvaluateOptions::Detail::kFull, {});
  CHECK(full.at("rows") == 2);
  CHECK(full.at("mean_auc").get<double>() == Approx(1.0));
  CHECK(full.at("f1").at("b").get<double>() == Approx(1.0));
  CHECK_FALSE(tasks::classifier_metrics(p, y, {}, {"a", "b"}, tasks::EvaluateOptions::Detail::kMetrics, {}).contains("f1"));
  CHECK(tasks::predictions_csv("id", {"x", "y"}, {"a", "b"}, p, false) == "id,a,b\nx,0.900000,0.200000\ny,0.100000,0.600000\n");
  CHECK(tasks::predictions_csv("row", {"1", "2"}, {"probability"}, {0.7f, 0.4f}, true) ==
        "row,probability,prediction\n1,0.700000,1\n2,0.400000,0\n");
}
