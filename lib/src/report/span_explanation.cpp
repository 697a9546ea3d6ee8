// A span tagger's explanations: the marked characters of a text, as JSON, terminal text and a page
// (see span_explanation.h).
#include <cmath>
#include <cstdio>

#include "attn/report/plots.h"
#include "attn/report/span_explanation.h"

namespace attn::report {

std::vector<MarkedRun> marked_runs(const std::string& text, const std::vector<std::int64_t>& offsets) {
  std::vector<MarkedRun> runs;
  for (std::int64_t c : offsets)
    if (runs.empty() || c != runs.back().end)
      runs.push_back({c, c + 1, ""});
    else
      ++runs.back().end;
  // Each run's bytes: code point c starts at the c-th byte that is not a UTF-8 continuation byte.
  std::size_t run = 0;
  std::int64_t point = -1;
  for (std::size_t b = 0; b < text.size() && run < runs.size(); ++b) {
    if ((static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) ++point;
    while (run < runs.size() && point >= runs[run].end) ++run;
    if (run < runs.size() && point >= runs[run].begin) runs[run].text += text[b];
  }
  return runs;
}

namespace {

bool read(const WordWeight& w) { return w.count > 0; }

}  // namespace

nlohmann::ordered_json to_json(const SpanExplanation& e) {
  nlohmann::ordered_json j;
  j["text"] = e.text;
  j["spans"] = e.spans;
  j["marked"] = nlohmann::ordered_json::array();
  for (const MarkedRun& r : marked_runs(e.text, e.spans)) j["marked"].push_back({{"begin", r.begin}, {"end", r.end}, {"text", r.text}});
  j["threshold"] = e.threshold;
  j["words"] = nlohmann::ordered_json::array();
  for (const WordWeight& w : e.words) {
    nlohmann::ordered_json word = {{"word", w.word}, {"probability", w.weight}, {"status", status_name(w.status)}};
    if (!w.reason.empty()) word["reason"] = w.reason;
    j["words"].push_back(std::move(word));
  }
  j["token_probabilities"] = e.token_probabilities;
  return j;
}

std::string to_json_line(const SpanExplanation& e) { return to_json(e).dump(); }

std::string to_text(const SpanExplanation& e) {
  std::string s = "marked:";
  const std::vector<MarkedRun> runs = marked_runs(e.text, e.spans);
  if (runs.empty()) s += " nothing";
  for (const MarkedRun& r : runs) s += " [" + r.text + "]";
  s += "\n";
  std::size_t width = 4;
  for (const WordWeight& w : e.words) width = std::max(width, std::min<std::size_t>(w.word.size(), 24));
  for (const WordWeight& w : e.words) {
    std::string word = w.word;
    if (word.size() < width) word.append(width - word.size(), ' ');
    if (!read(w)) {
      s += "  " + word + "   -     not read: " + (w.reason.empty() ? status_name(w.status) : w.reason) + "\n";
      continue;
    }
    s += (w.weight >= e.threshold ? "^ " : "  ") + word + formatted(" %.4f ", w.weight) +
         std::string(static_cast<std::size_t>(std::lround(std::max(0.0, w.weight) * 40)), '#') + "\n";
  }
  return s;
}

std::string to_html(const std::vector<SpanExplanation>& all) {
  std::string body =
      "<style>.text{margin:1.2em 0;padding:1em;border:1px solid #ccc;white-space:pre-wrap}"
      "u{text-decoration:underline 3px #c22;background:#fdd}.p{color:#666;font-size:85%}</style>\n"
      "<p>Underlined: the characters the tagger marks (a word is marked when its probability reaches its threshold). "
      "Hover a run for its characters' offsets.</p>\n";
  for (const SpanExplanation& e : all) {
    body += "<div class=\"text\">";
    std::size_t run = 0;
    std::int64_t point = -1;
    const std::vector<MarkedRun> runs = marked_runs(e.text, e.spans);
    bool open = false;
    std::string pending;  // bytes of the current code point, escaped once complete
    for (std::size_t b = 0; b <= e.text.size(); ++b) {
      const bool lead = b == e.text.size() || (static_cast<unsigned char>(e.text[b]) & 0xC0) != 0x80;
      if (lead) {
        body += xml_escape(pending);
        pending.clear();
        if (b == e.text.size()) break;
        ++point;
        while (run < runs.size() && point >= runs[run].end) {
          if (open) body += "</u>", open = false;
          ++run;
        }
        if (!open && run < runs.size() && point >= runs[run].begin) {
          body += "<u title=\"" + std::to_string(runs[run].begin) + "-" + std::to_string(runs[run].end) + "\">";
          open = true;
        }
      }
      pending += e.text[b];
    }
    if (open) body += "</u>";
    body += "<div class=\"p\">";
    for (const WordWeight& w : e.words)
      if (read(w) && w.weight >= 0.05) body += xml_escape(w.word) + formatted(" %.2f &nbsp; ", w.weight);
    body += "</div></div>\n";
  }
  return html_page("Marked spans", body);
}

}  // namespace attn::report
