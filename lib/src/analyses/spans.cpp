// attn spans (see spans.h).
#include "attn/analyses/spans.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/data/tables.h"
#include "attn/io/atomic_file.h"
#include "attn/metrics/spans.h"
#include "attn/tasks/task.h"
#include "attn/text/char_spans.h"
#include "attn/text/csv.h"

namespace attn::analyses {
namespace {

std::string offsets_json(const std::vector<std::int64_t>& offsets) { return nlohmann::json(offsets).dump(); }

}  // namespace

std::vector<std::int64_t> attended_offsets(const std::string& text, const std::vector<double>& weights, double threshold) {
  const double top = weights.empty() ? 0.0 : *std::max_element(weights.begin(), weights.end());
  std::vector<bool> chosen(weights.size(), false);
  for (std::size_t w = 0; w < weights.size(); ++w) chosen[w] = top > 0 && weights[w] >= threshold * top;
  return text::chosen_word_offsets(text, chosen);
}

std::string spans(const SpansRequest& r) {
  if (!(r.threshold > 0 && r.threshold <= 1))
    throw std::invalid_argument("--threshold must be in (0, 1], got " + std::to_string(r.threshold));
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  std::unique_ptr<tasks::TrainedModel> model = tasks::open_model(r.model);
  tasks::TextClassifierModel* classifier = model->text_classifier();
  tasks::SpanTaggerModel* tagger = model->span_tagger();
  if (!classifier && !tagger)
    throw std::invalid_argument("spans reads a span tagger's marks or a text classifier's attention over words; " +
                                tasks::describe_model(model->saved()) + " is neither");
  const data::SpanTable rows = data::read_span_table(r.csv, r.text_column, r.spans_column, r.id_column, data::Marks::kOptional);
  std::vector<std::vector<std::int64_t>> predicted;
  if (tagger) {
    predicted = tagger->text_spans(rows.texts, r.batch_size, r.threshold);
  } else {
    std::vector<tasks::Input> inputs;
    for (const std::string& t : rows.texts) inputs.push_back({t, {}});
    const std::vector<report::TextExplanation> explained = classifier->text_explanations(inputs, r.batch_size, tasks::ExplainOptions{});
    for (std::size_t i = 0; i < explained.size(); ++i) {
      std::vector<double> weights;
      for (const report::WordWeight& w : explained[i].words) weights.push_back(w.weight);
      predicted.push_back(attended_offsets(rows.texts[i], weights, r.threshold));
    }
  }
  nlohmann::ordered_json figures = {
      {"csv", r.csv}, {"rows", rows.texts.size()}, {"source", tagger ? "tagger" : "attention"}, {"threshold", r.threshold}};
  if (rows.marked) {
    const metrics::SpanScores s = metrics::span_scores(predicted, *rows.marked);
    figures["f1"] = s.f1;
    figures["precision"] = s.precision;
    figures["recall"] = s.recall;
  }
  if (!r.predictions.empty()) {
    std::string out = "id,spans\n";
    for (std::size_t i = 0; i < predicted.size(); ++i)
      out += text::csv_quote(rows.ids[i]) + "," + text::csv_quote(offsets_json(predicted[i])) + "\n";
    io::write_file_atomic(r.predictions, out);
  }
  if (!r.json.empty()) {
    nlohmann::ordered_json all = figures;
    all["per_row"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < predicted.size(); ++i) all["per_row"].push_back({{"id", rows.ids[i]}, {"spans", predicted[i]}});
    io::write_file_atomic(r.json, all.dump(2) + "\n");
  }
  return figures.dump(2) + "\n";
}

}  // namespace attn::analyses
