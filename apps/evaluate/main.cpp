// attn evaluate: scripted batch scoring of a CSV, Kaggle submission layout, and the competition metric.
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/io/threads.h"
#include "attn/models/evaluate.h"
#include "attn/models/saved_model.h"
#include "attn/report/plots.h"
#include "attn/data/prepare.h"
#include "attn/text/dataset.h"
#include "attn/train/metrics.h"
#include "attn/train/task.h"

namespace attn::apps {
namespace {

// feature-attention and seq2seq-attention: the library scores the CSV; this writes and prints.
int evaluate_other(const cxxopts::ParseResult& r, models::SavedModel& model, const std::string& csv, int threads) {
  if (r.count("labels-csv")) throw UsageError("--labels-csv is for text classifiers");
  const std::int64_t batch = r["batch-size"].as<std::int64_t>();
  models::CsvEvaluation e;
  if (model.task == models::TaskKind::kFeatureClassification) {
    e = models::evaluate_features(model, csv, batch);
    if (r.count("svg"))
      io::write_file_atomic(r["svg"].as<std::string>(), report::svg_bar_chart("Mean attention per feature", e.feature_names,
                                                                              e.mean_attention));
  } else {
    if (r.count("svg")) throw UsageError("--svg is for feature-attention models (seq2seq heatmaps: attn explain --svg)");
    const auto& d = model.config.at("data");
    e = models::evaluate_translations(
        model, csv, r.count("source-column") ? r["source-column"].as<std::string>() : d.value("source_column", "source"),
        r.count("target-column") ? r["target-column"].as<std::string>() : d.value("target_column", "target"), batch, threads);
  }
  if (r.count("predictions")) io::write_file_atomic(r["predictions"].as<std::string>(), e.predictions_csv);
  if (e.metrics.empty()) {
    if (r.count("metrics")) throw UsageError("--metrics needs the label / target column in the CSV");
    std::printf("scored %s (no labels or targets to compare with)\n", csv.c_str());
    return kExitOk;
  }
  std::printf("%s\n", e.metrics.dump(2).c_str());
  if (r.count("metrics")) io::write_file_atomic(r["metrics"].as<std::string>(), e.metrics.dump(2) + "\n");
  return kExitOk;
}

int run(int argc, char** argv) {
  cxxopts::Options options(
      "attn evaluate",
      "Score every row of a CSV with a trained model. Text classifiers: predictions in Kaggle's sample_submission\n"
      "layout, and with labels (in the CSV, or in Kaggle's test_labels.csv whose -1 rows are skipped) per-label and\n"
      "mean ROC AUC, log loss and accuracy. feature-attention: accuracy, log loss, ROC AUC and the mean attention\n"
      "per feature (--svg draws it). seq2seq-attention: exact match and character accuracy of the greedy outputs.\n\n"
      "  attn evaluate --model runs/toxic --csv test.csv --labels-csv test_labels.csv --predictions sub.csv\n"
      "  attn evaluate --model runs/features --csv features.csv --svg attention.svg\n"
      "  attn evaluate --model runs/dates --csv dates-test.csv --predictions dates-out.csv");
  options.add_options("Input")
      ("model", "Run directory or model.pt", cxxopts::value<std::string>())
      ("csv", "CSV to score", cxxopts::value<std::string>())
      ("text-column", "Column holding the text", cxxopts::value<std::string>()->default_value("comment_text"))
      ("id-column", "Column holding row ids", cxxopts::value<std::string>()->default_value("id"))
      ("labels-csv", "Labels by id, Kaggle's test_labels.csv layout (-1 = not scored)", cxxopts::value<std::string>())
      ("source-column", "seq2seq: input column (default: the training run's)", cxxopts::value<std::string>())
      ("target-column", "seq2seq: expected-output column (default: the training run's)", cxxopts::value<std::string>());
  options.add_options("Output")
      ("predictions", "Write id + one probability column per label here", cxxopts::value<std::string>())
      ("metrics", "Write the metrics as JSON here", cxxopts::value<std::string>())
      ("svg", "feature-attention: draw the mean attention per feature (seed 001's chart) here", cxxopts::value<std::string>())
      ("batch-size", "Rows per batch", cxxopts::value<std::int64_t>()->default_value("512"));
  add_threads_option(options);
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  const int threads = threads_option(r);
  if (r["batch-size"].as<std::int64_t>() < 1) throw UsageError("--batch-size must be >= 1");
  io::set_torch_threads(threads);
  models::SavedModel model = models::load_model(required<std::string>(r, "model"));
  const auto csv = required<std::string>(r, "csv");
  if (model.task != models::TaskKind::kTextClassification) return evaluate_other(r, model, csv, threads);
  if (r.count("svg")) throw UsageError("--svg is for feature-attention models");
  const auto& data_cfg = model.config.at("data");
  const auto label_names = data_cfg.at("labels").get<std::vector<std::string>>();

  // Tokenise and pad exactly as the model's training data was, with the model's own tokenizer.
  data::PrepareOptions o;
  o.csv = csv;
  o.columns.text_column = r["text-column"].as<std::string>();
  o.columns.id_column = r["id-column"].as<std::string>();
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
  const std::vector<float> probs = train::predict(model.module, x, rows, o.pad.padding, r["batch-size"].as<std::int64_t>());
  const std::size_t L = label_names.size();

  if (r.count("predictions")) {
    std::string out = "id";
    for (const auto& l : label_names) out += "," + l;
    out += "\n";
    char buf[32];
    for (std::size_t i = 0; i < ids.size(); ++i) {
      out += ids[i];
      for (std::size_t k = 0; k < L; ++k) {
        std::snprintf(buf, sizeof buf, ",%.6f", probs[i * L + k]);
        out += buf;
      }
      out += "\n";
    }
    io::write_file_atomic(r["predictions"].as<std::string>(), out);
  }

  std::vector<bool> keep;
  bool have_labels = !prepared.data.label_names.empty();
  if (r.count("labels-csv")) {
    const std::string path = r["labels-csv"].as<std::string>();
    const text::LabelTable t = text::read_label_csv(path, label_names, o.columns.id_column);
    std::unordered_map<std::string, std::size_t> row_of;
    for (std::size_t i = 0; i < t.ids.size(); ++i) row_of[t.ids[i]] = i;
    labels.assign(ids.size() * L, 0.0f);
    keep.assign(ids.size(), false);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      auto it = row_of.find(ids[i]);
      if (it == row_of.end()) throw std::runtime_error(path + ": no labels for id '" + ids[i] + "' of " + csv);
      std::copy(t.labels.begin() + static_cast<std::ptrdiff_t>(it->second * L),
                t.labels.begin() + static_cast<std::ptrdiff_t>((it->second + 1) * L), labels.begin() + static_cast<std::ptrdiff_t>(i * L));
      keep[i] = t.scored[it->second];
    }
    have_labels = true;
  }
  std::printf("scored %zu rows of %s\n", ids.size(), csv.c_str());
  if (!have_labels) {
    if (r.count("metrics")) throw UsageError("--metrics needs labels: label columns in the CSV, or --labels-csv");
    return kExitOk;
  }
  const train::Evaluation e = train::evaluate(probs, labels, L, keep);
  auto num = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::ordered_json m;
  m["csv"] = csv;
  m["rows_scored"] = e.rows;
  m["rows_skipped"] = static_cast<std::int64_t>(ids.size()) - e.rows;
  nlohmann::ordered_json auc;
  for (std::size_t k = 0; k < L; ++k) auc[label_names[k]] = num(e.auc[k]);
  m["roc_auc"] = auc;
  m["mean_roc_auc"] = num(e.mean_auc);
  m["log_loss"] = e.loss;
  m["accuracy"] = e.accuracy;
  std::printf("%s\n", m.dump(2).c_str());
  if (r.count("metrics")) io::write_file_atomic(r["metrics"].as<std::string>(), m.dump(2) + "\n");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn evaluate", [&] { return attn::apps::run(argc, argv); });
}
