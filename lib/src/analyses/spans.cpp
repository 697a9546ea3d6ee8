// attn spans (see spans.h).
#include "attn/analyses/spans.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/io/atomic_file.h"
#include "attn/metrics/spans.h"
#include "attn/tasks/task.h"
#include "attn/text/char_spans.h"
#include "attn/text/csv.h"

namespace attn::analyses {
namespace {

/// The file's rows: texts, ids and, when it has the column, the characters people marked.
struct SpanRows {
  std::vector<std::string> texts, ids;
  std::optional<std::vector<std::vector<std::int64_t>>> marked;
};

SpanRows read_rows(const SpansRequest& r) {
  text::CsvReader reader(r.csv);
  const std::size_t text_column = reader.column(r.text_column);
  const std::optional<std::size_t> spans_column = reader.find_column(r.spans_column);
  const bool has_ids = !r.id_column.empty();
  const std::size_t id_column = has_ids ? reader.column(r.id_column) : 0;
  reader.require_string(text_column);
  SpanRows out;
  if (spans_column) out.marked.emplace();
  text::CsvRecord record;
  while (reader.next(record)) {
    const std::string& t = record.fields[text_column];
    out.ids.push_back(has_ids ? record.fields[id_column] : std::to_string(out.texts.size()));
    if (spans_column)
      out.marked->push_back(text::parse_span_offsets(
          record.fields[*spans_column], text::code_points(t),
          r.csv + ":" + std::to_string(record.line) + ": column " + std::to_string(*spans_column + 1) + " (" + r.spans_column + ")"));
    out.texts.push_back(t);
  }
  if (out.texts.empty()) throw std::runtime_error(r.csv + ": no data rows");
  return out;
}

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
  if (!classifier)
    throw std::invalid_argument("spans reads a text classifier's attention over words; " + tasks::describe_model(model->saved()) +
                                " is none");
  const SpanRows rows = read_rows(r);
  std::vector<tasks::Input> inputs;
  for (const std::string& t : rows.texts) inputs.push_back({t, {}});
  const std::vector<report::TextExplanation> explained = classifier->text_explanations(inputs, r.batch_size, tasks::ExplainOptions{});
  std::vector<std::vector<std::int64_t>> predicted;
  for (std::size_t i = 0; i < explained.size(); ++i) {
    std::vector<double> weights;
    for (const report::WordWeight& w : explained[i].words) weights.push_back(w.weight);
    predicted.push_back(attended_offsets(rows.texts[i], weights, r.threshold));
  }
  nlohmann::ordered_json figures = {{"csv", r.csv}, {"rows", rows.texts.size()}, {"source", "attention"}, {"threshold", r.threshold}};
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
