// attn evaluate: scripted batch scoring of a CSV, Kaggle submission layout, and the competition metric.
#include <cstdio>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/io/threads.h"
#include "attn/models/evaluate.h"
#include "attn/models/saved_model.h"
#include "attn/report/plots.h"

namespace attn::apps {
namespace {

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
  const std::int64_t batch = r["batch-size"].as<std::int64_t>();
  if (r.count("svg") && model.task != models::TaskKind::kFeatureClassification)
    throw UsageError("--svg is for feature-attention models (seq2seq heatmaps: attn explain --svg)");
  if (r.count("labels-csv") && model.task != models::TaskKind::kTextClassification)
    throw UsageError("--labels-csv is for text classifiers");
  const auto& d = model.config.at("data");
  models::CsvEvaluation e;
  switch (model.task) {
    case models::TaskKind::kTextClassification:
      e = models::evaluate_text(model, csv, r["text-column"].as<std::string>(), r["id-column"].as<std::string>(),
                                r.count("labels-csv") ? r["labels-csv"].as<std::string>() : std::string(), batch, threads);
      break;
    case models::TaskKind::kFeatureClassification:
      e = models::evaluate_features(model, csv, batch);
      if (r.count("svg"))
        io::write_file_atomic(r["svg"].as<std::string>(),
                              report::svg_bar_chart("Mean attention per feature", e.feature_names, e.mean_attention));
      break;
    case models::TaskKind::kSequenceToSequence:
      e = models::evaluate_translations(
          model, csv, r.count("source-column") ? r["source-column"].as<std::string>() : d.value("source_column", "source"),
          r.count("target-column") ? r["target-column"].as<std::string>() : d.value("target_column", "target"), batch,
          threads);
      break;
  }
  if (r.count("predictions")) io::write_file_atomic(r["predictions"].as<std::string>(), e.predictions_csv);
  std::printf("scored %lld rows of %s\n", static_cast<long long>(e.rows), csv.c_str());
  if (e.metrics.empty()) {
    if (r.count("metrics")) throw UsageError("--metrics needs labels or targets: in the CSV (text models: or --labels-csv)");
    return kExitOk;
  }
  std::printf("%s\n", e.metrics.dump(2).c_str());
  if (r.count("metrics")) io::write_file_atomic(r["metrics"].as<std::string>(), e.metrics.dump(2) + "\n");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn evaluate", [&] { return attn::apps::run(argc, argv); });
}
