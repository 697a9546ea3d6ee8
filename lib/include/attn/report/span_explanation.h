#pragma once
/// A span tagger's explanations (tasks/span_tagging.h): the characters of a text it marks and each
/// word's probability of being marked, as JSON, terminal text (the marked runs in brackets, the
/// marked words with ^) and a page (the marked runs underlined). Torch-free.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/report/explanation.h"

namespace attn::report {

/// Which characters of a text a span tagger marks (tasks/span_tagging.h), and why, word by word.
struct SpanExplanation {
  std::string text;
  /// Every word of the text, in order; weight: its probability of being marked (the highest of its
  /// tokens'), 0 for a word the model did not read.
  std::vector<WordWeight> words;
  std::vector<float> token_probabilities;  ///< per token read, in order (what the model's forward gives)
  double threshold = 0.5;                  ///< a read word is marked when its probability is at least this
  std::vector<std::int64_t> spans;         ///< the marked characters: sorted code point offsets (SemEval's)
};

/// The marked characters of `text` (sorted code point offsets) as runs of consecutive characters,
/// each [begin, end) in code points with its text.
struct MarkedRun {
  std::int64_t begin = 0, end = 0;
  std::string text;
};
std::vector<MarkedRun> marked_runs(const std::string& text, const std::vector<std::int64_t>& offsets);

nlohmann::ordered_json to_json(const SpanExplanation& e);
/// to_json(e).dump().
std::string to_json_line(const SpanExplanation& e);
std::string to_text(const SpanExplanation& e);
std::string to_html(const std::vector<SpanExplanation>& all);

}  // namespace attn::report
