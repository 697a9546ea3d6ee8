#include "attn/models/evaluate.h"

#include <cmath>
#include <cstdio>

#include "attn/data/tables.h"
#include "attn/text/csv.h"
#include "attn/train/metrics.h"
#include "attn/train/task.h"

namespace attn::models {

CsvEvaluation evaluate_features(SavedModel& model, const std::string& csv, std::int64_t batch_size) {
  const nlohmann::json& d = model.config.at("data");
  CsvEvaluation out;
  out.feature_names = d.at("features").get<std::vector<std::string>>();
  const data::FeatureTable t = data::read_feature_csv(csv, out.feature_names, d.value("label", "label"), true);
  const auto n = static_cast<std::size_t>(t.rows), f = out.feature_names.size();
  const auto [probs, attention] = train::predict_features(model.module, t.values, static_cast<std::int64_t>(f), batch_size);
  out.mean_attention.assign(f, 0.0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < f; ++k) out.mean_attention[k] += attention[r * f + k] / static_cast<double>(n);
  out.predictions_csv = "row,probability,prediction\n";
  char buf[64];
  for (std::size_t r = 0; r < n; ++r) {
    std::snprintf(buf, sizeof buf, "%zu,%.6f,%d\n", r + 1, probs[r], probs[r] > 0.5f ? 1 : 0);
    out.predictions_csv += buf;
  }
  if (t.labels.empty()) return out;
  const train::Evaluation e = train::evaluate(probs, t.labels, 1);
  out.metrics["csv"] = csv;
  out.metrics["rows"] = t.rows;
  out.metrics["log_loss"] = e.loss;
  out.metrics["accuracy"] = e.accuracy;
  out.metrics["roc_auc"] = std::isnan(e.mean_auc) ? nlohmann::ordered_json() : nlohmann::ordered_json(e.mean_auc);
  nlohmann::ordered_json mean = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < f; ++k) mean[out.feature_names[k]] = out.mean_attention[k];
  out.metrics["mean_attention"] = mean;
  return out;
}

CsvEvaluation evaluate_translations(SavedModel& model, const std::string& csv, const std::string& source_column,
                                    const std::string& target_column, std::int64_t batch_size, int threads) {
  const text::Tokenizer& source = model.require_tokenizer();
  const text::Tokenizer& target = model.require_target_tokenizer();
  const data::PairTable pairs = data::read_pair_csv(csv, source_column, target_column, true);
  data::PairTable sources_only;
  sources_only.sources = pairs.sources;
  const train::SequencePairs enc = train::encode_pairs(sources_only, source, target, threads);
  std::vector<std::int64_t> rows;
  for (std::size_t i = 0; i < pairs.sources.size(); ++i) rows.push_back(static_cast<std::int64_t>(i));
  const std::vector<train::Translation> translated = train::translate(model.module, enc.source, rows, enc.end_id, batch_size);
  std::vector<std::string> predicted;
  for (const auto& t : translated) predicted.push_back(train::decode(target, t.ids));
  CsvEvaluation out;
  const bool have_targets = !pairs.targets.empty();
  out.predictions_csv = have_targets ? "source,target,prediction\n" : "source,prediction\n";
  for (std::size_t i = 0; i < predicted.size(); ++i)
    out.predictions_csv += text::csv_quote(pairs.sources[i]) + "," +
                           (have_targets ? text::csv_quote(pairs.targets[i]) + "," : std::string()) +
                           text::csv_quote(predicted[i]) + "\n";
  if (!have_targets) return out;
  const train::StringAccuracy a = train::string_accuracy(predicted, pairs.targets);
  out.metrics["csv"] = csv;
  out.metrics["rows"] = static_cast<std::int64_t>(predicted.size());
  out.metrics["exact_match"] = a.exact_match;
  out.metrics["char_accuracy"] = a.char_accuracy;
  return out;
}

}  // namespace attn::models
