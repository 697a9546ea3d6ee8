// Plausibility of importance methods against human rationales (see plausibility.h).
#include "attn/analyses/plausibility.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/data/rationales.h"
#include "attn/io/atomic_file.h"
#include "attn/tasks/task.h"

namespace attn::analyses {

using namespace tasks;  // the task interface (tasks/task.h) the analyses drive
namespace {

/// F1 of a precision and a recall (0 when both are 0), as ERASER's _f1.
double f1(double precision, double recall) { return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0; }

/// One row's IOU matches: the predicted spans (each word its own) whose IoU with some marked span is >= 0.5.
std::int64_t iou_matches(const std::vector<std::int64_t>& predicted, const std::vector<std::pair<std::int64_t, std::int64_t>>& spans) {
  std::int64_t matches = 0;
  for (std::int64_t p : predicted) {
    double best = 0;
    for (const auto& [a, b] : spans)  // [p, p + 1) against [a, b): the intersection is 1 or 0 words
      if (p >= a && p < b) best = std::max(best, 1.0 / static_cast<double>(b - a));
    matches += best >= 0.5;
  }
  return matches;
}

struct RowFigures {
  double iou_precision = 0, iou_recall = 0, token_f1 = 0, auprc = 0;
};

RowFigures row_figures(const RationaleScores& r, std::int64_t k) {
  const std::vector<std::int64_t> top = hard_rationale(r.scores, k);
  const auto matches = static_cast<double>(iou_matches(top, r.spans));
  RowFigures f;
  f.iou_precision = top.empty() ? 0.0 : matches / static_cast<double>(top.size());
  f.iou_recall = r.spans.empty() ? 0.0 : matches / static_cast<double>(r.spans.size());
  f.token_f1 = token_f1(top, r.marked);
  f.auprc = auprc(r.scores, r.marked);
  return f;
}

}  // namespace

std::vector<std::int64_t> hard_rationale(const std::vector<float>& scores, std::int64_t k) {
  std::vector<std::int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const float x = scores[static_cast<std::size_t>(a)], y = scores[static_cast<std::size_t>(b)];
    return x != y ? x > y : a > b;  // ties: the later position first
  });
  order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, k))));
  std::sort(order.begin(), order.end());
  return order;
}

double token_f1(const std::vector<std::int64_t>& predicted, const std::vector<std::uint8_t>& marked) {
  const auto gold = static_cast<double>(std::count(marked.begin(), marked.end(), 1));
  double hits = 0;
  for (std::int64_t p : predicted) hits += marked.at(static_cast<std::size_t>(p)) != 0;
  const double precision = predicted.empty() ? 0.0 : hits / static_cast<double>(predicted.size());
  const double recall = gold > 0 ? hits / gold : 0.0;
  return f1(precision, recall);
}

double auprc(const std::vector<float>& scores, const std::vector<std::uint8_t>& marked) {
  // scikit-learn's precision_recall_curve: one point per distinct score, highest first (tp, fp
  // counted down to it), then (recall 0, precision 1); the area by the trapezoid rule.
  const auto positives = static_cast<double>(std::count(marked.begin(), marked.end(), 1));
  if (positives == 0) return 0.0;
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  double tp = 0, fp = 0, area = 0, last_recall = 0, last_precision = 1;
  for (std::size_t i = 0; i < order.size(); ++i) {
    (marked[order[i]] ? tp : fp) += 1;
    if (i + 1 < order.size() && scores[order[i + 1]] == scores[order[i]]) continue;  // ties: one point
    const double recall = tp / positives, precision = tp / (tp + fp);
    area += (recall - last_recall) * (precision + last_precision) / 2;
    last_recall = recall;
    last_precision = precision;
  }
  return area;
}

namespace {

/// The figures over rows from each row's.
PlausibilityFigures figures_of(const std::vector<RowFigures>& rows) {
  if (rows.empty()) throw std::invalid_argument("plausibility: no row with a human rationale to score");
  PlausibilityFigures out;
  for (const RowFigures& f : rows) {
    out.iou_precision += f.iou_precision;
    out.iou_recall += f.iou_recall;
    out.token_f1 += f.token_f1;
    out.auprc += f.auprc;
  }
  const auto n = static_cast<double>(rows.size());
  out.iou_precision /= n;
  out.iou_recall /= n;
  out.token_f1 /= n;
  out.auprc /= n;
  out.iou_f1 = f1(out.iou_precision, out.iou_recall);
  return out;
}

}  // namespace

PlausibilityFigures plausibility_of(const std::vector<RationaleScores>& rows, std::int64_t k) {
  std::vector<RowFigures> figures;
  for (const RationaleScores& r : rows) figures.push_back(row_figures(r, k));
  return figures_of(figures);
}

PlausibilityFigures marks_as_scores(std::vector<RationaleScores> rows, std::int64_t k) {
  for (RationaleScores& r : rows) r.scores.assign(r.marked.begin(), r.marked.end());
  return plausibility_of(rows, k);
}

namespace {

/// The explanation's scores of `method` for `label`, one per entry of its "words"; a word the model
/// has no token for (dropped, filtered) scores lowest, and counts in `without_token`.
std::vector<float> explained_scores(const nlohmann::ordered_json& e, const std::string& method, const std::string& label,
                                    std::int64_t& without_token) {
  const auto& words = e.at("words");
  const auto& scores = e.at("word_importance").at(method).at(label);
  std::vector<float> out(words.size(), std::numeric_limits<float>::lowest());
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::string status = words[w].at("status");
    if (status == "dropped" || status == "filtered")
      ++without_token;
    else
      out[w] = scores.at(w).get<float>();
  }
  return out;
}

/// The explanation's attention per entry of its "words" (their weights), the same way.
std::vector<float> explained_weights(const nlohmann::ordered_json& e) {
  const auto& words = e.at("words");
  std::vector<float> out(words.size(), std::numeric_limits<float>::lowest());
  for (std::size_t w = 0; w < words.size(); ++w) {
    const std::string status = words[w].at("status");
    if (status != "dropped" && status != "filtered") out[w] = words[w].at("weight").get<float>();
  }
  return out;
}

/// The same per word of the row's file (the explanation's words are the file's non-empty words, in order).
std::vector<float> word_scores(const nlohmann::ordered_json& e, const data::RationaleRow& row, const std::string& method,
                               const std::string& label, std::int64_t& without_token) {
  const auto& words = e.at("words");
  const std::vector<float> explained = explained_scores(e, method, label, without_token);
  std::vector<float> out(row.words.size(), std::numeric_limits<float>::lowest());
  std::size_t w = 0;
  for (std::size_t i = 0; i < row.words.size(); ++i) {
    if (row.words[i].empty()) continue;
    if (w >= words.size() || words[w].at("word").get<std::string>() != row.words[i])
      throw std::runtime_error(row.id + ": the model's words do not line up with the file's at word " + std::to_string(i) + " ('" +
                               row.words[i] + "'; a tab or newline inside a word?)");
    out[i] = explained[w++];
  }
  return out;
}

std::string figure(double v) {
  char b[16];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

}  // namespace

nlohmann::ordered_json explanation_plausibility(const nlohmann::ordered_json& e, const std::vector<std::int64_t>& marked_words,
                                                std::int64_t k, const std::string& field) {
  if (k < 1) throw std::invalid_argument("plausibility: top-k must be >= 1");
  const std::size_t n = e.at("words").size();
  RationaleScores row;
  row.marked.assign(n, 0);
  for (std::size_t j = 0; j < marked_words.size(); ++j) {
    const std::int64_t w = marked_words[j];
    if (w < 0 || static_cast<std::size_t>(w) >= n)
      throw std::invalid_argument(field + "[" + std::to_string(j) + "]: " + std::to_string(w) + " is not a word of the text (it has " +
                                  std::to_string(n) + ")");
    row.marked[static_cast<std::size_t>(w)] = 1;
  }
  for (std::size_t w = 0; w < n; ++w)  // the marked words as spans of consecutive words
    if (row.marked[w] && (w == 0 || !row.marked[w - 1])) {
      std::size_t end = w;
      while (end < n && row.marked[end]) ++end;
      row.spans.emplace_back(static_cast<std::int64_t>(w), static_cast<std::int64_t>(end));
    }
  // The methods asked for, and the attention (its words' weights, the same for every label) when it was not.
  std::vector<std::string> methods;
  if (e.contains("word_importance"))
    for (const auto& [method, per_label] : e.at("word_importance").items()) methods.push_back(method);
  const bool weights = std::find(methods.begin(), methods.end(), "attention") == methods.end();
  if (weights) methods.insert(methods.begin(), "attention");
  nlohmann::ordered_json by_label = nlohmann::ordered_json::object();
  for (const auto& [label, p] : e.at("probabilities").items()) {
    if (row.spans.empty()) break;
    nlohmann::ordered_json figures = nlohmann::ordered_json::object();
    for (const std::string& method : methods) {
      std::int64_t without_token = 0;
      row.scores = weights && method == "attention" ? explained_weights(e) : explained_scores(e, method, label, without_token);
      const PlausibilityFigures f = plausibility_of({row}, k);
      figures[method] = {{"iou_f1", f.iou_f1}, {"token_f1", f.token_f1}, {"auprc", f.auprc}};
    }
    by_label[label] = std::move(figures);
  }
  return {{"rationale", marked_words}, {"top_k", k}, {"by_label", by_label}};
}

namespace {

/// Each method's figures per row, and what the rows hold.
struct ScoredRows {
  nlohmann::ordered_json per_row = nlohmann::ordered_json::array();
  std::vector<std::vector<RowFigures>> by_method;  // each method's figures per row
  std::vector<RationaleScores> marks;              // the rows' marks, for their own figures
  std::int64_t words = 0, without_token = 0;
};

/// The rows explained (each for the label it is scored for alone), scored per method against their marks.
ScoredRows score_rows(const Explanations& explained, const std::vector<data::RationaleRow>& rows,
                      const std::vector<models::Method>& methods, std::int64_t top_k) {
  ScoredRows out;
  out.by_method.resize(methods.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::ordered_json e = explained.json(i);
    const auto& explained_for = e.at("word_importance").front();  // {LABEL: scores}: the one label the row was explained for
    if (explained_for.size() != 1) throw std::logic_error("plausibility: row " + rows[i].id + " was not explained for one label");
    const std::string label = explained_for.begin().key();
    nlohmann::ordered_json row = {{"id", rows[i].id}, {"label", label}, {"words", rows[i].words.size()}};
    out.words += static_cast<std::int64_t>(rows[i].words.size());
    out.marks.push_back({{}, rows[i].marked, rows[i].spans});
    for (std::size_t m = 0; m < methods.size(); ++m) {
      std::int64_t missing = 0;
      const RationaleScores s{word_scores(e, rows[i], models::method_name(methods[m]), label, missing), rows[i].marked, rows[i].spans};
      if (m == 0) out.without_token += missing;
      const RowFigures f = row_figures(s, top_k);
      row[models::method_name(methods[m])] = {
          {"iou_precision", f.iou_precision}, {"iou_recall", f.iou_recall}, {"token_f1", f.token_f1}, {"auprc", f.auprc}};
      out.by_method[m].push_back(f);
    }
    out.per_row.push_back(std::move(row));
  }
  return out;
}

nlohmann::ordered_json figures_json(const PlausibilityFigures& f) {
  return {
      {"iou_f1", f.iou_f1}, {"iou_precision", f.iou_precision}, {"iou_recall", f.iou_recall}, {"token_f1", f.token_f1}, {"auprc", f.auprc}};
}

/// The figures over the rows: writes the JSON asked for, returns the table.
std::string report_rows(const PlausibilityRequest& r, std::size_t rows, const std::vector<models::Method>& methods, ScoredRows scored) {
  nlohmann::ordered_json report = {{"model", r.model}, {"rationales", r.rationales}, {"rows", rows},
                                   {"top_k", r.top_k}, {"words", scored.words},      {"words_without_token", scored.without_token}};
  std::string table = "plausibility of " + std::to_string(rows) + " human rationales (" + r.rationales + "), hard rationale: top " +
                      std::to_string(r.top_k) + " words\n  method                  IOU-F1  token-F1   AUPRC\n";
  nlohmann::ordered_json figures = nlohmann::ordered_json::object();
  for (std::size_t m = 0; m < methods.size(); ++m) {
    const PlausibilityFigures f = figures_of(scored.by_method[m]);
    const std::string name = models::method_name(methods[m]);
    figures[name] = figures_json(f);
    std::string padded = name;
    padded.resize(std::max<std::size_t>(padded.size(), 22), ' ');
    table += "  " + padded + "  " + figure(f.iou_f1) + "     " + figure(f.token_f1) + "   " + figure(f.auprc) + "\n";
  }
  report["methods"] = figures;
  const PlausibilityFigures reach = marks_as_scores(std::move(scored.marks), r.top_k);
  report["marks_as_scores"] = figures_json(reach);
  report["per_row"] = std::move(scored.per_row);
  table += "  (the marks as scores)   " + figure(reach.iou_f1) + "     " + figure(reach.token_f1) + "   " + figure(reach.auprc) +
           "   <- what agreeing with people exactly scores\n";
  table += "  words without a token of the model's (scored lowest): " + std::to_string(scored.without_token) + " of " +
           std::to_string(scored.words) + "\n";
  if (!r.json.empty()) io::write_file_atomic(r.json, report.dump(2) + "\n");
  return table;
}

}  // namespace

std::string plausibility(const PlausibilityRequest& r) {
  if (r.top_k < 1) throw std::invalid_argument("--top-k must be >= 1");
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  check_steps(r.steps, "--steps");
  std::unique_ptr<TrainedModel> model = open_model(r.model);
  if (!model->text_classifier())
    throw std::invalid_argument("plausibility compares a text classifier's word scores with human rationales; " +
                                describe_model(model->saved()) + " is none");
  std::vector<models::Method> methods = model->methods();
  if (!r.methods.empty()) methods = models::check_available(r.methods, methods, "--methods");
  std::vector<data::RationaleRow> rows = data::read_rationales(r.rationales, r.docs, "--docs");
  if (r.rows > 0 && static_cast<std::int64_t>(rows.size()) > r.rows) rows.resize(static_cast<std::size_t>(r.rows));
  if (rows.empty()) throw std::invalid_argument(r.rationales + ": no row with a human rationale to score");
  const std::vector<std::string> labels = model->facts().labels;
  if (!r.label.empty() && std::find(labels.begin(), labels.end(), r.label) == labels.end())
    throw std::invalid_argument("--label: '" + r.label + "' is not one of this model's labels");
  // Each row is explained for the label it is scored for alone: --label, else the row's class when
  // the model has it, else the most probable.
  std::vector<Input> inputs;
  ExplainOptions options;
  options.methods = methods;
  options.steps = r.steps;
  options.label = r.label;
  options.shown_label_only = true;
  for (const data::RationaleRow& row : rows) {
    inputs.push_back({row.text, {}});
    const bool own = r.label.empty() && std::find(labels.begin(), labels.end(), row.label) != labels.end();
    options.row_labels.push_back(own ? row.label : "");
  }
  const std::unique_ptr<Explanations> explained = model->explain(inputs, r.batch_size, options);
  return report_rows(r, rows.size(), methods, score_rows(*explained, rows, methods, r.top_k));
}

}  // namespace attn::analyses
