// What the classifier tasks share (see classifier.h).
#include "classifier.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <torch/script.h>

#include "attn/metrics/metrics.h"
#include "attn/text/csv.h"

namespace attn::tasks {
namespace {
/// A name as a CSV field: as it is unless it needs quoting.
std::string csv_field(const std::string& s) { return s.find_first_of(",\"\r\n") == std::string::npos ? s : text::csv_quote(s); }
}  // namespace

Loss binary_loss(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& pos_weight,
                 const torch::Tensor& row_weights) {
  const torch::Tensor weight = row_weights.defined() ? row_weights.unsqueeze(1) : torch::Tensor();  // (broadcast over the labels)
  const torch::Tensor loss = torch::binary_cross_entropy_with_logits(logits, targets, weight, pos_weight);
  torch::NoGradGuard no_grad;  // Keras' binary accuracy: (logit > 0) == target
  return {loss, ((logits > 0).to(torch::kFloat32) == targets).to(torch::kFloat32).mean().item<double>()};
}

Loss class_loss(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& class_weight,
                const torch::Tensor& row_weights) {
  const torch::Tensor cls = targets.argmax(1);
  torch::Tensor row_loss = -torch::log_softmax(logits, 1).gather(1, cls.unsqueeze(1)).squeeze(1);  // -log p(class)
  if (class_weight.defined()) row_loss = row_loss * class_weight.index_select(0, cls);
  if (row_weights.defined()) row_loss = row_loss * row_weights;
  const torch::Tensor loss = row_loss.mean();
  torch::NoGradGuard no_grad;
  return {loss, (logits.argmax(1) == cls).to(torch::kFloat32).mean().item<double>()};
}

torch::Tensor rationale_loss(const torch::Tensor& attention, const torch::Tensor& targets) {
  // (log of at least 1e-12: a row's attention is 0 at padding, where its target is 0 too)
  return -(targets * attention.to(targets.scalar_type()).clamp_min(1e-12).log()).sum(1).mean();
}

torch::Tensor counterfactual_loss(const torch::Tensor& logits, const torch::Tensor& copy_logits, LabelKind kind, std::int64_t rows) {
  const bool classes = kind == LabelKind::kOneClass;
  const torch::Tensor z = classes ? torch::log_softmax(logits, 1) : logits;
  const torch::Tensor z_copy = classes ? torch::log_softmax(copy_logits, 1) : copy_logits;
  return (z - z_copy).abs().mean(1).sum() / static_cast<double>(std::max<std::int64_t>(rows, 1));
}

namespace {

/// "w1,w2,...": `n` positive numbers, else std::invalid_argument naming `flag`.
std::vector<float> given_weights(const std::string& spec, std::size_t n, const std::string& flag, const char* what) {
  std::vector<float> w;
  for (const std::string& v : data::split_list(spec)) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x > 0) || !std::isfinite(x))
      throw std::invalid_argument(flag + ": '" + v + "' is not a positive number");
    w.push_back(static_cast<float>(x));
  }
  if (w.size() != n) throw std::invalid_argument(flag + ": " + std::to_string(w.size()) + " weights for " + std::to_string(n) + " " + what);
  return w;
}

}  // namespace

torch::Tensor loss_weights_of(const LossWeights& spec, LabelKind kind, const std::vector<float>& labels, std::size_t n_labels,
                              const std::vector<std::int64_t>& rows) {
  const bool one_class = kind == LabelKind::kOneClass;
  if (one_class && !spec.positive.empty())
    throw std::invalid_argument("--pos-weight weighs 0/1 label columns; for one class per row (--label-column) give --class-weight");
  if (!one_class && !spec.classes.empty())
    throw std::invalid_argument(
        "--class-weight weighs the classes of one class per row (--label-column); for 0/1 labels give --pos-weight");
  const std::string& given = one_class ? spec.classes : spec.positive;
  if (given.empty()) return {};
  std::vector<double> positives(n_labels, 0.0);  // rows of each label (class)
  for (std::int64_t r : rows)
    for (std::size_t k = 0; k < n_labels; ++k) positives[k] += labels[static_cast<std::size_t>(r) * n_labels + k];
  const double n = static_cast<double>(rows.size());
  std::vector<float> w;
  if (!one_class && given == "auto") {
    for (double p : positives) w.push_back(p > 0 ? static_cast<float>((n - p) / p) : 1.0f);  // a label never positive: unweighted
  } else if (one_class && given == "balanced") {
    for (double p : positives) w.push_back(p > 0 ? static_cast<float>(n / (static_cast<double>(n_labels) * p)) : 1.0f);
  } else {
    w = given_weights(given, n_labels, one_class ? "--class-weight" : "--pos-weight", one_class ? "classes" : "labels");
  }
  return torch::tensor(w, torch::kFloat32);
}

data::InputSpec thresholds_input() {
  return {"thresholds",
          "Classifiers: decision thresholds for precision, recall and F1 per label: 0.5 (default), auto (each "
          "label's best F1 on these rows) or t1,t2,...",
          ""};
}

Thresholds::Thresholds(const data::Inputs& options, std::size_t labels) {
  if (!options.given("thresholds")) return;
  spec_ = options.text("thresholds");
  metrics::check_thresholds(spec_, labels);
}

nlohmann::ordered_json classifier_metrics(const std::vector<float>& probs, const std::vector<float>& y, const std::vector<bool>& keep,
                                          const std::vector<std::string>& labels, LabelKind kind, EvaluateOptions::Detail detail,
                                          const Thresholds& thresholds) {
  const std::size_t L = labels.size();
  if (kind == LabelKind::kOneClass)
    return to_json(metrics::class_metrics(probs, y, L, keep), labels, detail == EvaluateOptions::Detail::kFull);
  nlohmann::ordered_json out = to_json(metrics::binary_metrics(probs, y, L, keep), labels);
  if (detail == EvaluateOptions::Detail::kFull) metrics::add_to(out, metrics::decisions(probs, y, L, keep, thresholds.spec()), labels);
  return out;
}

std::vector<std::string> classifier_metric_names(LabelKind kind) {
  if (kind == LabelKind::kOneClass) return {"loss", "accuracy", "macro_f1", "ovo_auc", "mean_auc"};
  return {"loss", "accuracy", "mean_auc"};
}

std::string predictions_csv(const std::string& key_header, const std::vector<std::string>& keys, const std::vector<std::string>& columns,
                            const std::vector<float>& probs, PredictionColumn prediction) {
  const std::size_t L = columns.size();
  std::string csv = key_header;
  for (const std::string& c : columns) csv += "," + csv_field(c);
  csv += prediction == PredictionColumn::kNone ? "\n" : ",prediction\n";
  char buf[32];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    csv += keys[i];
    for (std::size_t k = 0; k < L; ++k) {
      std::snprintf(buf, sizeof buf, ",%.6f", probs[i * L + k]);
      csv += buf;
    }
    if (prediction == PredictionColumn::kPositive) csv += probs[i * L] > 0.5f ? ",1" : ",0";
    if (prediction == PredictionColumn::kClass)
      csv += "," + csv_field(columns[static_cast<std::size_t>(std::max_element(probs.begin() + i * L, probs.begin() + (i + 1) * L) -
                                                              (probs.begin() + i * L))]);
    csv += "\n";
  }
  return csv;
}

}  // namespace attn::tasks
