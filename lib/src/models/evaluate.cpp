#include "attn/models/evaluate.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "attn/data/prepare.h"
#include "attn/data/tables.h"
#include "attn/text/dataset.h"
#include "attn/text/csv.h"
#include "attn/train/metrics.h"
#include "attn/train/task.h"

namespace attn::models {

namespace {
nlohmann::ordered_json number_or_null(double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); }
}  // namespace

CsvEvaluation evaluate_text(SavedModel& model, const std::string& csv, const std::string& text_column,
                            const std::string& id_column, const std::string& labels_csv, std::int64_t batch_size,
                            int threads) {
  const auto& data_cfg = model.config.at("data");
  const auto label_names = data_cfg.at("labels").get<std::vector<std::string>>();
  data::PrepareOptions o;
  o.csv = csv;
  o.columns.text_column = text_column;
  o.columns.id_column = id_column;
  o.columns.id_required = true;
  o.columns.label_columns = label_names;
  o.columns.labels_optional = true;
  o.apply_loaded_tokenizer = &model.require_tokenizer();
  o.pad.maxlen = data_cfg.at("maxlen").get<std::int64_t>();
  o.pad.padding = text::parse_side(data_cfg.value("padding", "pre"), "padding");
  o.pad.truncating = text::parse_side(data_cfg.value("truncating", "pre"), "truncating");
  o.threads = threads;
  data::Prepared prepared = data::prepare_csv(o);
  const std::vector<std::string>& ids = prepared.data.ids;
  std::vector<float> labels = std::move(prepared.data.labels);
  const text::PaddedSequences& x = prepared.data.x;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(x.rows));
  for (std::int64_t i = 0; i < x.rows; ++i) rows[static_cast<std::size_t>(i)] = i;
  const std::vector<float> probs = train::predict(model.module, x, rows, o.pad.padding, batch_size);
  const std::size_t L = label_names.size();

  CsvEvaluation out;
  out.rows = x.rows;
  out.predictions_csv = "id";
  for (const auto& l : label_names) out.predictions_csv += "," + l;
  out.predictions_csv += "\n";
  char buf[32];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.predictions_csv += ids[i];
    for (std::size_t k = 0; k < L; ++k) {
      std::snprintf(buf, sizeof buf, ",%.6f", probs[i * L + k]);
      out.predictions_csv += buf;
    }
    out.predictions_csv += "\n";
  }

  std::vector<bool> keep;
  bool have_labels = !prepared.data.label_names.empty();
  if (!labels_csv.empty()) {
    const text::LabelTable t = text::read_label_csv(labels_csv, label_names, id_column);
    std::unordered_map<std::string, std::size_t> row_of;
    for (std::size_t i = 0; i < t.ids.size(); ++i) row_of[t.ids[i]] = i;
    labels.assign(ids.size() * L, 0.0f);
    keep.assign(ids.size(), false);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      auto it = row_of.find(ids[i]);
      if (it == row_of.end()) throw std::runtime_error(labels_csv + ": no labels for id '" + ids[i] + "' of " + csv);
      std::copy(t.labels.begin() + static_cast<std::ptrdiff_t>(it->second * L),
                t.labels.begin() + static_cast<std::ptrdiff_t>((it->second + 1) * L),
                labels.begin() + static_cast<std::ptrdiff_t>(i * L));
      keep[i] = t.scored[it->second];
    }
    have_labels = true;
  }
  if (!have_labels) return out;
  const train::Evaluation e = train::evaluate(probs, labels, L, keep);
  out.metrics["csv"] = csv;
  out.metrics["rows_scored"] = e.rows;
  out.metrics["rows_skipped"] = static_cast<std::int64_t>(ids.size()) - e.rows;
  nlohmann::ordered_json auc;
  for (std::size_t k = 0; k < L; ++k) auc[label_names[k]] = number_or_null(e.auc[k]);
  out.metrics["roc_auc"] = auc;
  out.metrics["mean_roc_auc"] = number_or_null(e.mean_auc);
  out.metrics["log_loss"] = e.loss;
  out.metrics["accuracy"] = e.accuracy;
  return out;
}

CsvEvaluation evaluate_features(SavedModel& model, const std::string& csv, std::int64_t batch_size) {
  const nlohmann::json& d = model.config.at("data");
  CsvEvaluation out;
  out.feature_names = d.at("features").get<std::vector<std::string>>();
  const data::FeatureTable t = data::read_feature_csv(csv, out.feature_names, d.value("label", "label"), true);
  const auto n = static_cast<std::size_t>(t.rows), f = out.feature_names.size();
  out.rows = t.rows;
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
  out.metrics["roc_auc"] = number_or_null(e.mean_auc);
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
  out.rows = static_cast<std::int64_t>(predicted.size());
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
