#include "attn/report/explanation.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

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

nlohmann::ordered_json to_json(const TextExplanation& e) {
  nlohmann::ordered_json probs = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) probs[e.label_names[k]] = e.probabilities[k];
  nlohmann::ordered_json words = nlohmann::ordered_json::array();
  for (const WordWeight& w : e.words) {
    nlohmann::ordered_json j = {{"word", w.word}, {"tokens", w.tokens}, {"weight", w.weight}, {"status", w.status}};
    if (!w.reason.empty()) j["reason"] = w.reason;
    words.push_back(std::move(j));
  }
  nlohmann::ordered_json out;
  out["text"] = e.text;
  out["probabilities"] = std::move(probs);
  out["words"] = std::move(words);
  out["ids"] = e.ids;
  out["attention"] = e.attention;
  if (!e.self_attention.empty()) out["self_attention"] = e.self_attention;  // [layer][head][query * T + key]
  return out;
}

namespace {

// JSON written directly, byte for byte what nlohmann's dump() writes for to_json's document (the
// server writes thousands of words a second: a document of small objects costs more than the
// model): strings with '"', '\\' and control characters escaped and the rest as it is (valid
// UTF-8 in, as every text attn explains is), numbers by nlohmann's own shortest round-trip digits.

void put_string(std::string& out, const std::string& s) {
  out += '"';
  std::size_t run = 0;  // start of the run of characters written as they are
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s, run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        char u[8];
        std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(c));
        out += u;
      }
    }
  }
  out.append(s, run, std::string::npos);
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
    put_string(s, w.status);
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
  s += '}';
  return s;
}

std::string to_json_line(const FeatureExplanation& e, SelfAttention) { return to_json(e).dump(); }
std::string to_json_line(const AlignmentExplanation& e, SelfAttention) { return to_json(e).dump(); }

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
