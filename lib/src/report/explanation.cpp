#include "attn/report/explanation.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

#include "attn/report/plots.h"
#include "attn/text/python_json.h"

namespace attn::report {

const char* status_name(WordStatus status) {
  static constexpr const char* kNames[] = {"kept", "oov", "subwords", "dropped", "filtered"};  // WordStatus's order
  return kNames[static_cast<std::size_t>(status)];
}

const char* status_name(SentenceStatus status) {
  static constexpr const char* kNames[] = {"read", "empty", "dropped"};  // SentenceStatus's order
  return kNames[static_cast<std::size_t>(status)];
}

namespace {
/// A text none of whose words the model knows (empty, or every word unknown): its probabilities are
/// the model's bias. JSON says so in "status" (text output in a line of its own).
constexpr const char* kNoKnownWord = "no known word";
}  // namespace

namespace {

/// A bar of '#' for a weight in [0, 1], 40 characters at 1.
std::string bar(double weight) { return std::string(static_cast<std::size_t>(std::max(0L, std::lround(weight * 40))), '#'); }

/// `s` padded with spaces to `width` bytes (printf's %-Ns).
std::string padded(std::string s, std::size_t width) { return s.size() < width ? s.append(width - s.size(), ' ') : s; }

/// How a counted word was read, when not as itself.
const char* how_read(WordStatus status) {
  return status == WordStatus::kOov ? "  (as the OOV word)" : status == WordStatus::kSubwords ? "  (by its n-grams)" : "";
}

bool counts(const WordWeight& w) {
  return w.status == WordStatus::kKept || w.status == WordStatus::kOov || w.status == WordStatus::kSubwords;
}

/// {METHOD: {TARGET: [scores]}}, the targets named by `names`.
nlohmann::ordered_json importance_by_target(const std::vector<Importance>& all, const std::vector<std::string>& names) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Importance& m : all) {
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < names.size() && k < m.scores.size(); ++k) per[names[k]] = m.scores[k];
    out[m.method] = std::move(per);
  }
  return out;
}

/// {"steps": S, "completeness_gap": {TARGET: gap}} (targets named by `names`), or a list of gaps.
nlohmann::ordered_json integrated_json(const IntegratedGradients& ig, const std::vector<std::string>* names) {
  nlohmann::ordered_json gaps;
  if (names) {
    gaps = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < names->size() && k < ig.completeness_gap.size(); ++k) gaps[(*names)[k]] = ig.completeness_gap[k];
  } else {
    gaps = ig.completeness_gap;
  }
  return {{"steps", ig.steps}, {"completeness_gap", gaps}};
}

/// A method's column title and its width in a terminal table.
std::size_t column_width(const Importance& m) { return std::max<std::size_t>(10, m.method.size()); }

/// Right-aligned in `width`.
std::string right(const std::string& s, std::size_t width) { return s.size() < width ? std::string(width - s.size(), ' ') + s : s; }

/// A background shading a score: red for support, blue against, by |score| / scale.
std::string shade(double score, double scale) {
  const double a = scale > 0 ? std::min(1.0, std::abs(score) / scale) : 0;
  return score >= 0 ? "rgba(220,40,40," + formatted("%.3f", a) + ")" : "rgba(40,90,220," + formatted("%.3f", a) + ")";
}

/// Each word's score by one method and target: the sum over its kept tokens.
std::vector<double> word_scores(const TextExplanation& e, const Importance& m, std::size_t target) {
  std::vector<double> out(e.words.size(), 0.0);
  if (target >= m.scores.size()) return out;
  const std::vector<float>& s = m.scores[target];
  for (std::size_t i = 0; i < e.words.size(); ++i)
    for (std::size_t t = e.words[i].first; t < e.words[i].first + e.words[i].count && t < s.size(); ++t) out[i] += s[t];
  return out;
}

/// The labels a text's importance rows are for, in their order: every label, or the one explained.
std::vector<std::string> importance_labels(const TextExplanation& e) {
  if (e.importance_label < 0) return e.label_names;
  const auto k = static_cast<std::size_t>(e.importance_label);
  return {k < e.label_names.size() ? e.label_names[k] : "?"};
}

/// The row of a text's importance scores that holds the shown label's.
std::size_t shown_row(const TextExplanation& e) { return e.importance_label < 0 ? e.shown_label : 0; }

/// {METHOD: {LABEL: [one score per entry of "words": its kept tokens' sum, 0 for a dropped word]}}.
nlohmann::ordered_json word_importance(const TextExplanation& e) {
  const std::vector<std::string> names = importance_labels(e);
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Importance& m : e.importance) {
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < names.size() && k < m.scores.size(); ++k) {
      const std::vector<double> scores = word_scores(e, m, k);
      per[names[k]] = std::vector<float>(scores.begin(), scores.end());
    }
    out[m.method] = std::move(per);
  }
  return out;
}

/// A word's weight within its sentence (hierarchical models): its kept tokens' word_attention.
double within_sentence(const TextExplanation& e, const WordWeight& w) {
  double sum = 0;
  for (std::size_t t = w.first; t < w.first + w.count && t < e.word_attention.size(); ++t) sum += e.word_attention[t];
  return sum;
}

/// "sentences": per sentence its text, weight, status and words (weight within the sentence,
/// effective weight = sentence weight x that).
nlohmann::ordered_json sentences_json(const TextExplanation& e) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SentenceWeight& s : e.sentences) {
    nlohmann::ordered_json j = {{"text", s.text}, {"weight", s.weight}, {"status", status_name(s.status)}};
    if (!s.reason.empty()) j["reason"] = s.reason;
    nlohmann::ordered_json words = nlohmann::ordered_json::array();
    for (std::size_t i = s.first_word; i < s.first_word + s.words && i < e.words.size(); ++i) {
      const WordWeight& w = e.words[i];
      words.push_back({{"word", w.word}, {"weight", within_sentence(e, w)}, {"effective", w.weight}, {"status", status_name(w.status)}});
    }
    j["words"] = std::move(words);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

// ---- Texts -----------------------------------------------------------------------------------

nlohmann::ordered_json to_json(const TextExplanation& e) {
  nlohmann::ordered_json probs = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) probs[e.label_names[k]] = e.probabilities[k];
  nlohmann::ordered_json words = nlohmann::ordered_json::array();
  for (const WordWeight& w : e.words) {
    nlohmann::ordered_json j = {{"word", w.word}, {"tokens", w.tokens}, {"weight", w.weight}, {"status", status_name(w.status)}};
    if (!w.reason.empty()) j["reason"] = w.reason;
    words.push_back(std::move(j));
  }
  nlohmann::ordered_json out;
  out["text"] = e.text;
  out["probabilities"] = std::move(probs);
  out["words"] = std::move(words);
  out["ids"] = e.ids;
  out["attention"] = e.attention;
  if (e.ids.empty()) out["status"] = kNoKnownWord;
  if (!e.sentences.empty()) out["sentences"] = sentences_json(e);
  if (!e.self_attention.empty()) out["self_attention"] = e.self_attention;  // [layer][head][query * T + key]
  const std::vector<std::string> explained = importance_labels(e);
  if (!e.importance.empty()) {
    out["importance"] = importance_by_target(e.importance, explained);
    out["word_importance"] = word_importance(e);
  }
  if (e.integrated.steps > 0) out["integrated_gradients"] = integrated_json(e.integrated, &explained);
  return out;
}

namespace {

// JSON written directly, byte for byte what nlohmann's dump() writes for to_json's document (the
// server writes thousands of words a second: a document of small objects costs more than the
// model): strings with '"', '\\' and control characters escaped and the rest as it is (valid
// UTF-8 in, as every text attn explains is), numbers by nlohmann's own shortest round-trip digits.

void put_string(std::string& out, const std::string& s) {
  out += '"';
  text::pyjson::append_escaped(out, s, text::pyjson::NonAscii::kAsIs);
  out += '"';
}

void put_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[64];
  out.append(buf, nlohmann::detail::to_chars(buf, buf + sizeof buf, v));  // what dump() writes for a double
}

template <class T>
void put_numbers(std::string& out, const std::vector<T>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    if constexpr (std::is_integral_v<T>)
      out += std::to_string(values[i]);
    else
      put_number(out, values[i]);
  }
  out += ']';
}

}  // namespace

std::string to_json_line(const TextExplanation& e, SelfAttention self_attention) {
  std::string s = "{\"text\":";
  put_string(s, e.text);
  s += ",\"probabilities\":{";
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) {
    if (k) s += ',';
    put_string(s, e.label_names[k]);
    s += ':';
    put_number(s, e.probabilities[k]);
  }
  s += "},\"words\":[";
  for (std::size_t i = 0; i < e.words.size(); ++i) {
    const WordWeight& w = e.words[i];
    s += i ? ",{\"word\":" : "{\"word\":";
    put_string(s, w.word);
    s += ",\"tokens\":[";
    for (std::size_t t = 0; t < w.tokens.size(); ++t) {
      if (t) s += ',';
      put_string(s, w.tokens[t]);
    }
    s += "],\"weight\":";
    put_number(s, w.weight);
    s += ",\"status\":";
    put_string(s, status_name(w.status));
    if (!w.reason.empty()) {
      s += ",\"reason\":";
      put_string(s, w.reason);
    }
    s += '}';
  }
  s += "],\"ids\":";
  put_numbers(s, e.ids);
  s += ",\"attention\":";
  put_numbers(s, e.attention);
  if (e.ids.empty()) s += ",\"status\":\"" + std::string(kNoKnownWord) + "\"";
  if (!e.sentences.empty()) s += ",\"sentences\":" + sentences_json(e).dump();
  if (self_attention == SelfAttention::kInclude && !e.self_attention.empty()) {
    s += ",\"self_attention\":[";
    for (std::size_t l = 0; l < e.self_attention.size(); ++l) {
      if (l) s += ',';
      s += '[';
      for (std::size_t h = 0; h < e.self_attention[l].size(); ++h) {
        if (h) s += ',';
        put_numbers(s, e.self_attention[l][h]);
      }
      s += ']';
    }
    s += ']';
  }
  const std::vector<std::string> explained = importance_labels(e);
  if (!e.importance.empty()) {
    s += ",\"importance\":" + importance_by_target(e.importance, explained).dump();
    s += ",\"word_importance\":" + word_importance(e).dump();
  }
  if (e.integrated.steps > 0) s += ",\"integrated_gradients\":" + integrated_json(e.integrated, &explained).dump();
  s += '}';
  return s;
}

std::string to_json_line(const FeatureExplanation& e, SelfAttention) { return to_json(e).dump(); }
std::string to_json_line(const AlignmentExplanation& e, SelfAttention) { return to_json(e).dump(); }

namespace {

/// The methods as columns, one line per word, for the shown label.
std::string importance_table(const TextExplanation& e) {
  const std::size_t k = shown_row(e);
  const std::string label = e.shown_label < e.label_names.size() ? e.label_names[e.shown_label] : "?";
  std::string s = "  importance for " + label + " (each word: the sum over its tokens)\n  " + padded("word", 20);
  std::vector<std::vector<double>> columns;
  for (const Importance& m : e.importance) {
    s += " " + right(m.method, column_width(m));
    columns.push_back(word_scores(e, m, k));
  }
  s += "\n";
  for (std::size_t i = 0; i < e.words.size(); ++i) {
    const WordWeight& w = e.words[i];
    s += "  " + padded(w.word, 20);
    if (!counts(w)) {
      s += " " + std::string(status_name(w.status)) + " (" + w.reason + ")\n";
      continue;
    }
    for (std::size_t m = 0; m < e.importance.size(); ++m)
      s += " " + right(formatted("%+.4f", columns[m][i]), column_width(e.importance[m]));
    s += std::string(how_read(w.status)) + "\n";
  }
  if (e.integrated.steps > 0 && k < e.integrated.completeness_gap.size())
    s += "  integrated-gradients: " + std::to_string(e.integrated.steps) + " steps, completeness gap " +
         formatted("%+.2e", e.integrated.completeness_gap[k]) + " (sum of scores - (z(x) - z(baseline)))\n";
  return s;
}

/// Hierarchical models: each sentence with its weight, then its words with their effective weight
/// (sentence x word) and their weight within the sentence.
std::string sentence_lines(const TextExplanation& e) {
  std::string s;
  for (std::size_t i = 0; i < e.sentences.size(); ++i) {
    const SentenceWeight& st = e.sentences[i];
    std::string text = st.text;
    for (char& c : text)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (text.size() > 70) text = text.substr(0, 67) + "...";
    s += "  sentence " + std::to_string(i + 1);
    if (st.status != SentenceStatus::kRead) {
      s += " " + std::string(status_name(st.status)) + " (" + st.reason + "): " + text + "\n";
      continue;
    }
    s += formatted(" %.4f ", st.weight) + bar(st.weight) + "  " + text + "\n";
    for (std::size_t k = st.first_word; k < st.first_word + st.words && k < e.words.size(); ++k) {
      const WordWeight& w = e.words[k];
      if (counts(w))
        s += "    " + padded(w.word, 20) + formatted(" %.4f", w.weight) + formatted(" (in its sentence %.4f) ", within_sentence(e, w)) +
             bar(w.weight) + how_read(w.status) + "\n";
      else
        s += "    " + padded(w.word, 20) + " " + status_name(w.status) + " (" + w.reason + ")\n";
    }
  }
  return s;
}

}  // namespace

std::string to_text(const TextExplanation& e) {
  std::string s = e.text + "\n ";
  if (e.ids.empty()) s += " (no word of this text is in the model's vocabulary: the probabilities are the model's bias)\n ";
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k)
    s += " " + e.label_names[k] + formatted(" %.4f", e.probabilities[k]);
  s += "\n";
  if (!e.importance.empty()) return s + importance_table(e) + "\n";
  if (!e.sentences.empty()) return s + sentence_lines(e) + "\n";
  for (const auto& w : e.words) {
    if (counts(w))
      s += "  " + padded(w.word, 20) + formatted(" %.4f ", w.weight) + bar(w.weight) + how_read(w.status) + "\n";
    else
      s += "  " + padded(w.word, 20) + " " + status_name(w.status) + " (" + w.reason + ")\n";
  }
  return s + "\n";
}

namespace {

/// One row of shaded words per method, for the shown label (red: for the label, blue: against).
std::string importance_rows(const TextExplanation& e) {
  const std::size_t k = shown_row(e);
  std::string h = "<table class=\"methods\"><tr><th colspan=\"2\">importance for " +
                  xml_escape(e.shown_label < e.label_names.size() ? e.label_names[e.shown_label] : "?") + "</th></tr>";
  for (const Importance& m : e.importance) {
    const std::vector<double> scores = word_scores(e, m, k);
    double scale = 0;
    for (double v : scores) scale = std::max(scale, std::abs(v));
    h += "<tr data-method=\"" + xml_escape(m.method) + "\"><td>" + xml_escape(m.method) + "</td><td>";
    for (std::size_t i = 0; i < e.words.size(); ++i) {
      const WordWeight& w = e.words[i];
      if (counts(w))
        h += "<span class=\"w\" style=\"background:" + shade(scores[i], scale) + "\" title=\"" + formatted("%.4g", scores[i]) + "\">" +
             xml_escape(w.word) + "</span> ";
      else
        h += "<span class=\"w dropped\" title=\"" + xml_escape(w.reason) + "\">" + xml_escape(w.word) + "</span> ";
    }
    h += "</td></tr>";
  }
  return h + "</table>";
}

/// Hierarchical models: a bar per sentence (its weight), its words shaded by their weight within it,
/// dimmed by sqrt of the sentence's weight (Yang et al.'s display: a minor sentence's words stay pale).
std::string sentence_rows(const TextExplanation& e) {
  std::string h = "<table class=\"sentences\">";
  double top = 0;
  for (const SentenceWeight& s : e.sentences) top = std::max(top, s.weight);
  for (const SentenceWeight& s : e.sentences) {
    h += "<tr class=\"sentence\" data-weight=\"" + formatted("%.6f", s.weight) + "\"><td>" + formatted("%.3f", s.weight) +
         "</td><td><div class=\"sbar\" style=\"width:" + std::to_string(static_cast<int>(s.weight * 120)) + "px\"></div></td><td>";
    double max_w = 0;
    for (std::size_t k = s.first_word; k < s.first_word + s.words && k < e.words.size(); ++k)
      max_w = std::max(max_w, within_sentence(e, e.words[k]));
    for (std::size_t k = s.first_word; k < s.first_word + s.words && k < e.words.size(); ++k) {
      const WordWeight& w = e.words[k];
      const double v = within_sentence(e, w);
      if (counts(w))
        h += "<span class=\"w\" style=\"background:rgba(220,40,40," +
             formatted("%.3f", max_w > 0 && top > 0 ? v / max_w * std::sqrt(s.weight / top) : 0) + ")\" title=\"" + formatted("%.4f", v) +
             " in its sentence\">" + xml_escape(w.word) + "</span> ";
      else
        h += "<span class=\"w dropped\" title=\"" + xml_escape(w.reason.empty() ? s.reason : w.reason) + "\">" + xml_escape(w.word) +
             "</span> ";
    }
    h += "</td></tr>";
  }
  return h + "</table>";
}

}  // namespace

std::string to_html(const std::vector<TextExplanation>& all) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attn explain</title><style>"
      "body{font-family:sans-serif;margin:2em;max-width:60em}.text{margin:1.5em 0;padding:1em;border:1px solid #ccc}"
      ".w{padding:2px 3px;margin:1px;border-radius:3px;display:inline-block}.dropped{color:#999;text-decoration:line-through}"
      "table{border-collapse:collapse;margin-top:.5em}td{padding:2px "
      "8px;font-size:90%}.sbar{background:#36c;height:10px}</style></head><body>\n"
      "<h1>Word attention</h1><p>Each word is shaded by its attention weight; struck-through words were dropped by "
      "the tokenizer (hover for the reason).</p>\n";
  for (const auto& e : all) {
    double max_w = 0;
    for (const auto& w : e.words) max_w = std::max(max_w, w.weight);
    h += "<div class=\"text\">";
    if (!e.sentences.empty()) h += sentence_rows(e);
    h += "<div>";
    for (const auto& w : e.words) {
      if (counts(w))
        h += "<span class=\"w\" style=\"background:rgba(220,40,40," + formatted("%.3f", max_w > 0 ? w.weight / max_w : 0) + ")\" title=\"" +
             std::to_string(w.weight) + "\">" + xml_escape(w.word) + "</span> ";
      else
        h += "<span class=\"w dropped\" title=\"" + xml_escape(w.reason) + "\">" + xml_escape(w.word) + "</span> ";
    }
    h += "</div><table>";
    for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k)
      h += "<tr><td>" + xml_escape(e.label_names[k]) + "</td><td>" + formatted("%.4f", e.probabilities[k]) +
           "</td><td><div style=\"background:#c33;height:8px;width:" + std::to_string(static_cast<int>(e.probabilities[k] * 200)) +
           "px\"></div></td></tr>";
    h += "</table>";
    if (!e.importance.empty()) h += importance_rows(e);
    h += "</div>\n";
  }
  return h + "</body></html>\n";
}

std::vector<std::string> to_svg(const std::vector<TextExplanation>&) { return {}; }

// ---- Feature rows ----------------------------------------------------------------------------

nlohmann::ordered_json to_json(const FeatureExplanation& e) {
  nlohmann::ordered_json features = nlohmann::ordered_json::array();
  for (std::size_t f = 0; f < e.feature_names.size(); ++f)
    features.push_back({{"feature", e.feature_names[f]}, {"value", e.values[f]}, {"weight", e.attention[f]}});
  nlohmann::ordered_json out = {{"probability", e.probability}, {"label", e.label_name}, {"features", features}};
  const std::vector<std::string> labels = {e.label_name};
  if (!e.importance.empty()) {
    out["baseline"] = e.baseline;
    out["baseline_kind"] = e.baseline_kind;
    out["importance"] = importance_by_target(e.importance, labels);
  }
  if (e.integrated.steps > 0) out["integrated_gradients"] = integrated_json(e.integrated, &labels);
  return out;
}

std::string to_text(const FeatureExplanation& e) {
  std::string s = "P(" + e.label_name + " = 1) = " + formatted("%.4f", e.probability) + "\n";
  if (!e.importance.empty()) {
    s += "  importance for " + e.label_name + " (baseline: the " + e.baseline_kind + ")\n  " + padded("feature", 16) + right("value", 11) +
         right("baseline", 11);
    for (const Importance& m : e.importance) s += " " + right(m.method, column_width(m));
    s += "\n";
    for (std::size_t f = 0; f < e.feature_names.size(); ++f) {
      s += "  " + padded(e.feature_names[f], 16) + formatted(" %10.4f", e.values[f]) +
           formatted(" %10.4f", f < e.baseline.size() ? e.baseline[f] : 0.0);
      for (const Importance& m : e.importance)
        s += " " + right(formatted("%+.4f", m.scores.empty() || f >= m.scores[0].size() ? 0.0 : m.scores[0][f]), column_width(m));
      s += "\n";
    }
    if (e.integrated.steps > 0 && !e.integrated.completeness_gap.empty())
      s += "  integrated-gradients: " + std::to_string(e.integrated.steps) + " steps, completeness gap " +
           formatted("%+.2e", e.integrated.completeness_gap[0]) + "\n";
    return s + "\n";
  }
  for (std::size_t f = 0; f < e.feature_names.size(); ++f)
    s += "  " + padded(e.feature_names[f], 16) + formatted(" %10.4f", e.values[f]) + formatted("  weight %.4f ", e.attention[f]) +
         bar(e.attention[f]) + "\n";
  return s + "\n";
}

std::vector<std::string> to_svg(const std::vector<FeatureExplanation>& all) {
  if (all.empty()) return {};
  std::vector<double> mean(all.front().feature_names.size(), 0.0);
  for (const auto& e : all)
    for (std::size_t f = 0; f < mean.size() && f < e.attention.size(); ++f) mean[f] += e.attention[f] / static_cast<double>(all.size());
  const std::string title =
      all.size() == 1 ? "Attention per feature" : "Mean attention per feature (" + std::to_string(all.size()) + " rows)";
  return {svg_bar_chart(title, all.front().feature_names, mean)};
}

std::string to_html(const std::vector<FeatureExplanation>& all) {
  const auto svg = to_svg(all);
  return html_page("attn explain", svg.empty() ? std::string() : svg.front());
}

// ---- Alignments ------------------------------------------------------------------------------

nlohmann::ordered_json to_json(const AlignmentExplanation& e) {
  nlohmann::ordered_json out = {{"source", e.source},
                                {"output", e.output},
                                {"source_tokens", e.source_tokens},
                                {"output_tokens", e.output_tokens},
                                {"attention", e.attention}};
  if (!e.importance.empty()) {
    nlohmann::ordered_json methods = nlohmann::ordered_json::object();
    for (const Importance& m : e.importance) {  // [output x source] row-major, as "attention"
      std::vector<float> flat;
      for (const auto& row : m.scores) flat.insert(flat.end(), row.begin(), row.end());
      methods[m.method] = flat;
    }
    out["importance"] = std::move(methods);
  }
  if (e.integrated.steps > 0) out["integrated_gradients"] = integrated_json(e.integrated, nullptr);
  return out;
}

std::string to_text(const AlignmentExplanation& e) {
  std::string s = e.source + " -> " + e.output + "\n" + text_heatmap(e.output_tokens, e.source_tokens, e.attention);
  for (const Importance& m : e.importance) {
    // |score| per output row, scaled by the row's largest: which source characters each output drew on.
    std::vector<float> shades;
    for (const auto& row : m.scores) {
      float top = 0;
      for (float v : row) top = std::max(top, std::abs(v));
      for (float v : row) shades.push_back(top > 0 ? std::abs(v) / top : 0.0f);
    }
    s += "  " + m.method + " (|score| / the row's largest)\n" + text_heatmap(e.output_tokens, e.source_tokens, shades);
  }
  if (e.integrated.steps > 0) {
    float worst = 0;
    for (float g : e.integrated.completeness_gap) worst = std::max(worst, std::abs(g));
    s += "  integrated-gradients: " + std::to_string(e.integrated.steps) + " steps, largest completeness gap " + formatted("%.2e", worst) +
         "\n";
  }
  return s + "\n";
}

std::vector<std::string> to_svg(const std::vector<AlignmentExplanation>& all) {
  std::vector<std::string> out;
  for (const auto& e : all) out.push_back(svg_heatmap(e.source + " -> " + e.output, e.output_tokens, e.source_tokens, e.attention));
  return out;
}

std::string to_html(const std::vector<AlignmentExplanation>& all) {
  std::string body;
  for (const std::string& svg : to_svg(all)) body += "<div>" + svg + "</div>\n";
  return html_page("Attention: output x input", body);
}

}  // namespace attn::report
