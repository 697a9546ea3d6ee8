#include "attn/report/explanation.h"

#include <cmath>
#include <cstdio>

#include "attn/report/plots.h"

namespace attn::report {
namespace {

std::string format(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

/// A bar of '#' for a weight in [0, 1], 40 characters at 1.
std::string bar(double weight) { return std::string(static_cast<std::size_t>(std::max(0L, std::lround(weight * 40))), '#'); }

/// `s` padded with spaces to `width` bytes (printf's %-Ns).
std::string padded(std::string s, std::size_t width) { return s.size() < width ? s.append(width - s.size(), ' ') : s; }

bool counts(const WordWeight& w) { return w.status == "kept" || w.status == "oov"; }

}  // namespace

// ---- Texts -----------------------------------------------------------------------------------

namespace {

// A text's JSON object in three parts, so that to_json_line can write the words one at a time:
// {"text", "probabilities"}, then "words", then {"ids", "attention", "self_attention"}.
nlohmann::ordered_json head_json(const TextExplanation& e) {
  nlohmann::ordered_json probs = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) probs[e.label_names[k]] = e.probabilities[k];
  nlohmann::ordered_json head;
  head["text"] = e.text;
  head["probabilities"] = std::move(probs);
  return head;
}

nlohmann::ordered_json word_json(const WordWeight& w) {
  nlohmann::ordered_json j = {{"word", w.word}, {"tokens", w.tokens}, {"weight", w.weight}, {"status", w.status}};
  if (!w.reason.empty()) j["reason"] = w.reason;
  return j;
}

nlohmann::ordered_json tail_json(const TextExplanation& e) {
  nlohmann::ordered_json tail;
  tail["ids"] = e.ids;
  tail["attention"] = e.attention;
  if (!e.self_attention.empty()) tail["self_attention"] = e.self_attention;  // [layer][head][query * T + key]
  return tail;
}

}  // namespace

nlohmann::ordered_json to_json(const TextExplanation& e) {
  nlohmann::ordered_json out = head_json(e);
  nlohmann::ordered_json words = nlohmann::ordered_json::array();
  for (const auto& w : e.words) words.push_back(word_json(w));
  out["words"] = std::move(words);
  nlohmann::ordered_json tail = tail_json(e);
  for (auto& [key, value] : tail.items()) out[key] = std::move(value);
  return out;
}

std::string to_json_line(const TextExplanation& e) {
  std::string s = head_json(e).dump();
  s.pop_back();  // the head's closing brace
  s += ",\"words\":[";
  for (std::size_t i = 0; i < e.words.size(); ++i) {
    if (i) s += ',';
    s += word_json(e.words[i]).dump();
  }
  s += "],";
  s += tail_json(e).dump().substr(1);  // without its opening brace
  return s;
}

std::string to_json_line(const FeatureExplanation& e) { return to_json(e).dump(); }
std::string to_json_line(const AlignmentExplanation& e) { return to_json(e).dump(); }

std::string to_text(const TextExplanation& e) {
  std::string s = e.text + "\n ";
  if (e.ids.empty()) s += " (no word of this text is in the model's vocabulary: the probabilities are the model's bias)\n ";
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k)
    s += " " + e.label_names[k] + format(" %.4f", e.probabilities[k]);
  s += "\n";
  for (const auto& w : e.words) {
    if (counts(w))
      s += "  " + padded(w.word, 20) + format(" %.4f ", w.weight) + bar(w.weight) + (w.status == "oov" ? "  (as the OOV word)" : "") + "\n";
    else
      s += "  " + padded(w.word, 20) + " " + w.status + " (" + w.reason + ")\n";
  }
  return s + "\n";
}

std::string to_html(const std::vector<TextExplanation>& all) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attn explain</title><style>"
      "body{font-family:sans-serif;margin:2em;max-width:60em}.text{margin:1.5em 0;padding:1em;border:1px solid #ccc}"
      ".w{padding:2px 3px;margin:1px;border-radius:3px;display:inline-block}.dropped{color:#999;text-decoration:line-through}"
      "table{border-collapse:collapse;margin-top:.5em}td{padding:2px 8px;font-size:90%}</style></head><body>\n"
      "<h1>Word attention</h1><p>Each word is shaded by its attention weight; struck-through words were dropped by "
      "the tokenizer (hover for the reason).</p>\n";
  for (const auto& e : all) {
    double max_w = 0;
    for (const auto& w : e.words) max_w = std::max(max_w, w.weight);
    h += "<div class=\"text\"><div>";
    for (const auto& w : e.words) {
      if (counts(w))
        h += "<span class=\"w\" style=\"background:rgba(220,40,40," + format("%.3f", max_w > 0 ? w.weight / max_w : 0) +
             ")\" title=\"" + std::to_string(w.weight) + "\">" + xml_escape(w.word) + "</span> ";
      else
        h += "<span class=\"w dropped\" title=\"" + xml_escape(w.reason) + "\">" + xml_escape(w.word) + "</span> ";
    }
    h += "</div><table>";
    for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k)
      h += "<tr><td>" + xml_escape(e.label_names[k]) + "</td><td>" + format("%.4f", e.probabilities[k]) +
           "</td><td><div style=\"background:#c33;height:8px;width:" + std::to_string(static_cast<int>(e.probabilities[k] * 200)) +
           "px\"></div></td></tr>";
    h += "</table></div>\n";
  }
  return h + "</body></html>\n";
}

std::vector<std::string> to_svg(const std::vector<TextExplanation>&) { return {}; }

// ---- Feature rows ----------------------------------------------------------------------------

nlohmann::ordered_json to_json(const FeatureExplanation& e) {
  nlohmann::ordered_json features = nlohmann::ordered_json::array();
  for (std::size_t f = 0; f < e.feature_names.size(); ++f)
    features.push_back({{"feature", e.feature_names[f]}, {"value", e.values[f]}, {"weight", e.attention[f]}});
  return {{"probability", e.probability}, {"label", e.label_name}, {"features", features}};
}

std::string to_text(const FeatureExplanation& e) {
  std::string s = "P(" + e.label_name + " = 1) = " + format("%.4f", e.probability) + "\n";
  for (std::size_t f = 0; f < e.feature_names.size(); ++f)
    s += "  " + padded(e.feature_names[f], 16) + format(" %10.4f", e.values[f]) + format("  weight %.4f ", e.attention[f]) +
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
  return {{"source", e.source}, {"output", e.output}, {"source_tokens", e.source_tokens},
          {"output_tokens", e.output_tokens}, {"attention", e.attention}};
}

std::string to_text(const AlignmentExplanation& e) {
  return e.source + " -> " + e.output + "\n" + text_heatmap(e.output_tokens, e.source_tokens, e.attention) + "\n";
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
