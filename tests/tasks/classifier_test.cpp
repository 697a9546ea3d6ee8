// What the classifier tasks share: positive weights, the loss, thresholds checked up front, the
// metrics and the predictions CSV's two layouts.
#include <cmath>

#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include "tasks/classifier.h"
#include "tasks_test_util.h"

using namespace attn;

TEST_CASE("positive weights: negatives / positives per label over the training rows, or given", "[tasks][classifier]") {
  // two labels, four rows: label 0 positive once, label 1 positive three times
  const std::vector<float> y = {1, 1, 0, 1, 0, 1, 0, 0};
  const auto weights = [&](const std::string& spec, const std::vector<std::int64_t>& rows) {
    return tasks::loss_weights_of({spec, ""}, tasks::LabelKind::kIndependent, y, 2, rows);
  };
  const torch::Tensor w = weights("auto", {0, 1, 2, 3});
  CHECK(w[0].item<float>() == Approx(3.0));
  CHECK(w[1].item<float>() == Approx(1.0 / 3));
  CHECK(weights("auto", {2, 3})[0].item<float>() == 1.0f);  // never positive: unweighted
  CHECK(weights("2,0.5", {0})[1].item<float>() == 0.5f);
  CHECK_FALSE(weights("", {0}).defined());
  CHECK_THROWS_WITH(weights("2", {0}), Catch::Contains("--pos-weight: 1 weights for 2 labels"));
  CHECK_THROWS_WITH(weights("-1,1", {0}), Catch::Contains("'-1' is not a positive number"));
  CHECK_THROWS_WITH(tasks::loss_weights_of({"", "balanced"}, tasks::LabelKind::kIndependent, y, 2, {0}),
                    Catch::Contains("--class-weight weighs the classes of one class per row"));
}

TEST_CASE("class weights: balanced as scikit-learn's (rows / (classes x the class's rows)), or given", "[tasks][classifier]") {
  // three classes, five rows: A twice, B three times, C never
  const std::vector<float> y = {1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0};
  const auto weights = [&](const std::string& spec) {
    return tasks::loss_weights_of({"", spec}, tasks::LabelKind::kOneClass, y, 3, {0, 1, 2, 3, 4});
  };
  const torch::Tensor w = weights("balanced");
  CHECK(w[0].item<float>() == Approx(5.0 / (3 * 2)));
  CHECK(w[1].item<float>() == Approx(5.0 / (3 * 3)));
  CHECK(w[2].item<float>() == 1.0f);  // no rows: unweighted
  CHECK(weights("1,2,3")[2].item<float>() == 3.0f);
  CHECK_THROWS_WITH(weights("1,2"), Catch::Contains("--class-weight: 2 weights for 3 classes"));
  CHECK_THROWS_WITH(weights("auto"), Catch::Contains("--class-weight: 'auto' is not a positive number"));
  CHECK_THROWS_WITH(tasks::loss_weights_of({"auto", ""}, tasks::LabelKind::kOneClass, y, 3, {0}),
                    Catch::Contains("--pos-weight weighs 0/1 label columns; for one class per row (--label-column) give --class-weight"));
}

TEST_CASE("class loss: -log softmax of the row's class, weighted per class, averaged over rows, argmax accuracy", "[tasks][classifier]") {
  const torch::Tensor logits = torch::tensor({2.0f, 0.0f, -1.0f, 0.5f, 1.5f, 0.0f}).view({2, 3}),
                      y = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f}).view({2, 3});
  const auto lse = [](double a, double b, double c) { return std::log(std::exp(a) + std::exp(b) + std::exp(c)); };
  const double row0 = lse(2, 0, -1) - 2, row1 = lse(0.5, 1.5, 0) - 0.5;
  const tasks::Loss plain = tasks::class_loss(logits, y, {});
  CHECK(plain.value.item<double>() == Approx((row0 + row1) / 2));
  CHECK(plain.accuracy == Approx(0.5));  // row 1 decides the second class
  // Keras' class_weight: the weighted sum over the rows, divided by the rows (not by the weights).
  const tasks::Loss weighted = tasks::class_loss(logits, y, torch::tensor({3.0f, 1.0f, 1.0f}));
  CHECK(weighted.value.item<double>() == Approx((3 * row0 + 3 * row1) / 2));
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
  const auto full =
      tasks::classifier_metrics(p, y, {}, {"a", "b"}, tasks::LabelKind::kIndependent, tasks::EvaluateOptions::Detail::kFull, {});
  CHECK(full.at("rows") == 2);
  CHECK(full.at("mean_auc").get<double>() == Approx(1.0));
  CHECK(full.at("f1").at("b").get<double>() == Approx(1.0));
  CHECK_FALSE(tasks::classifier_metrics(p, y, {}, {"a", "b"}, tasks::LabelKind::kIndependent, tasks::EvaluateOptions::Detail::kMetrics, {})
                  .contains("f1"));
  CHECK(tasks::predictions_csv("id", {"x", "y"}, {"a", "b"}, p, tasks::PredictionColumn::kNone) ==
        "id,a,b\nx,0.900000,0.200000\ny,0.100000,0.600000\n");
  CHECK(tasks::predictions_csv("row", {"1", "2"}, {"probability"}, {0.7f, 0.4f}, tasks::PredictionColumn::kPositive) ==
        "row,probability,prediction\n1,0.700000,1\n2,0.400000,0\n");
  // One class per row: the most probable class by name; a name that needs quoting is quoted.
  CHECK(tasks::predictions_csv("id", {"x", "y"}, {"hate, speech", "normal"}, {0.7f, 0.3f, 0.2f, 0.8f}, tasks::PredictionColumn::kClass) ==
        "id,\"hate, speech\",normal,prediction\nx,0.700000,0.300000,\"hate, speech\"\ny,0.200000,0.800000,normal\n");
  const auto classes = tasks::classifier_metrics({0.7f, 0.3f, 0.2f, 0.8f}, {1, 0, 0, 1}, {}, {"a", "b"}, tasks::LabelKind::kOneClass,
                                                 tasks::EvaluateOptions::Detail::kFull, {});
  CHECK(classes.at("macro_f1").get<double>() == Approx(1.0));
  CHECK(classes.at("confusion").at("b").at("b") == 1);
  CHECK(tasks::classifier_metric_names(tasks::LabelKind::kOneClass) ==
        std::vector<std::string>{"loss", "accuracy", "macro_f1", "ovo_auc", "mean_auc"});
}

TEST_CASE("rationale loss: -sum_t g_t log a_t per row, averaged over every row of the batch, its gradient", "[tasks][classifier]") {
  const torch::Tensor a = torch::tensor({0.1, 0.6, 0.3, 0.0, 0.5, 0.5, 0.0, 0.0}, torch::kDouble).view({2, 4}).requires_grad_(true);
  const torch::Tensor g = torch::tensor({0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0}, torch::kDouble).view({2, 4});
  const torch::Tensor l = tasks::rationale_loss(a, g);
  const double want = -(0.5 * std::log(0.6) + 0.5 * std::log(0.3)) / 2;  // the second row has no rationale: 0, still counted
  CHECK(l.item<double>() == Approx(want));
  const torch::Tensor grad = torch::autograd::grad({l}, {a})[0];
  // d/da_t = -g_t / (a_t x rows); 0 where g is 0, also at a padding position (a = 0).
  CHECK(grad[0][1].item<double>() == Approx(-0.5 / (0.6 * 2)));
  CHECK(grad[0][2].item<double>() == Approx(-0.5 / (0.3 * 2)));
  CHECK(grad[0][0].item<double>() == 0.0);
  CHECK(grad[1].abs().sum().item<double>() == 0.0);
  CHECK(std::isfinite(grad.sum().item<double>()));
}

TEST_CASE("counterfactual logit pairing: the mean logit gap of each pair, summed over pairs, over the batch's rows; its gradient",
          "[tasks][classifier]") {
  // Two pairs in a batch of three rows, two 0/1 labels: by hand.
  const torch::Tensor z = torch::tensor({1.0, -2.0, 0.5, 0.5}, torch::kDouble).view({2, 2}).requires_grad_(true);
  const torch::Tensor zc = torch::tensor({0.0, -1.0, 0.5, 1.5}, torch::kDouble).view({2, 2}).requires_grad_(true);
  const torch::Tensor l = tasks::counterfactual_loss(z, zc, tasks::LabelKind::kIndependent, 3);
  CHECK(l.item<double>() == Approx(((1.0 + 1.0) / 2 + (0.0 + 1.0) / 2) / 3));
  // One class per row: the gap of the log-probabilities, so shifting a row's logits changes nothing.
  const torch::Tensor shifted = tasks::counterfactual_loss(z, z.detach() + 7.0, tasks::LabelKind::kOneClass, 3);
  CHECK(shifted.item<double>() == Approx(0.0).margin(1e-12));
  // The gradient against central finite differences, one class per row (log-softmax inside).
  const torch::Tensor a = torch::tensor({0.3, -1.2, 2.0, 0.7, 0.1, -0.4}, torch::kDouble).view({2, 3}).requires_grad_(true);
  const torch::Tensor b = torch::tensor({-0.5, 0.4, 1.1, 0.2, 0.9, -1.3}, torch::kDouble).view({2, 3});
  const auto loss = [&](const torch::Tensor& x) { return tasks::counterfactual_loss(x, b, tasks::LabelKind::kOneClass, 4); };
  const torch::Tensor grad = torch::autograd::grad({loss(a)}, {a})[0];
  const double h = 1e-6;
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t k = 0; k < 3; ++k) {
      torch::Tensor up = a.detach().clone(), down = a.detach().clone();
      up[i][k] += h;
      down[i][k] -= h;
      const double numeric = (loss(up).item<double>() - loss(down).item<double>()) / (2 * h);
      CHECK(grad[i][k].item<double>() == Approx(numeric).margin(1e-7));
    }
}
