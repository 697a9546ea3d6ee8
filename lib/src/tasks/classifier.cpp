// What the classifier tasks share (see classifier.h).
#include "classifier.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <torch/torch.h>

#include "attn/tasks/metrics.h"

namespace attn::tasks {

Loss binary_loss(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& pos_weight) {
  const torch::Tensor loss = torch::binary_cross_entropy_with_logits(logits, targets, {}, pos_weight);
  torch::NoGradGuard no_grad;  // Keras' binary accuracy: (logit > 0) == target
  return {loss, ((logits > 0).to(torch::kFloat32) == targets).to(torch::kFloat32).mean().item<double>()};
}

torch::Tensor positive_weights_of(const std::string& spec, const std::vector<float>& labels, std::size_t n_labels,
                                  const std::vector<std::int64_t>& rows) {
  if (spec.empty()) return {};
  std::vector<float> w;
  if (spec == "auto") {
    for (std::size_t k = 0; k < n_labels; ++k) {
      double positives = 0;
      for (std::int64_t r : rows) positives += labels[static_cast<std::size_t>(r) * n_labels + k];
      const double negatives = static_cast<double>(rows.size()) - positives;
      w.push_back(positives > 0 ? static_cast<float>(negatives / positives) : 1.0f);  // a label never positive: unweighted
    }
  } else {
    for (const std::string& v : data::split_list(spec)) {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(x > 0) || !std::isfinite(x))
        throw std::invalid_argument("--pos-weight: '" + v + "' is not a positive number");
      w.push_back(static_cast<float>(x));
    }
    if (w.size() != n_labels)
      throw std::invalid_argument("--pos-weight: " + std::to_string(w.size()) + " weights for " + std::to_string(n_labels) + " labels");
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
  check_thresholds(spec_, labels);
}

nlohmann::ordered_json classifier_metrics(const std::vector<float>& probs, const std::vector<float>& y, const std::vector<bool>& keep,
                                          const std::vector<std::string>& labels, EvaluateOptions::Detail detail,
                                          const Thresholds& thresholds) {
  const std::size_t L = labels.size();
  nlohmann::ordered_json metrics = to_json(binary_metrics(probs, y, L, keep), labels);
  if (detail == EvaluateOptions::Detail::kFull) add_to(metrics, decisions(probs, y, L, keep, thresholds.spec()), labels);
  return metrics;
}

std::string predictions_csv(const std::string& key_header, const std::vector<std::string>& keys, const std::vector<std::string>& columns,
                            const std::vector<float>& probs, bool prediction) {
  const std::size_t L = columns.size();
  std::string csv = key_header;
  for (const std::string& c : columns) csv += "," + c;
  csv += prediction ? ",prediction\n" : "\n";
  char buf[32];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    csv += keys[i];
    for (std::size_t k = 0; k < L; ++k) {
      std::snprintf(buf, sizeof buf, ",%.6f", probs[i * L + k]);
      csv += buf;
    }
    if (prediction) csv += probs[i * L] > 0.5f ? ",1" : ",0";
    csv += "\n";
  }
  return csv;
}

}  // namespace attn::tasks
