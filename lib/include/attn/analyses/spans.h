#pragma once
/// `attn spans` as a library call: the characters of each text that make it toxic, in SemEval-2021
/// Task 5's format (Toxic Spans: 0-based code point offsets), and, when the file has the marks
/// people made, the task's character F1 (metrics/spans.h).
///
/// A span tagger (tasks/span_tagging.h) marks the words whose probability is at least `threshold`
/// (0.5: the threshold it learned on its held-out rows, already in its output bias).
///
/// A text classifier gives its unsupervised answer from its attention: a word of a text is toxic
/// when its weight is at least `threshold` times the text's highest word weight; the toxic words
/// become characters as text/char_spans.h says (their letters, and the gap between two toxic
/// neighbours). The threshold is a choice to make on held-out rows, never on the rows reported
/// (bench/quality/run_toxic_spans.py). Torch-free header.
#include <cstdint>
#include <string>
#include <vector>

namespace attn::analyses {

struct SpansRequest {
  std::string model;
  std::string csv;                     ///< CSV, TSV or JSON Lines with a text column
  std::string text_column = "text";    ///< SemEval's
  std::string spans_column = "spans";  ///< the people's marks, scored against when the file has the column
  std::string id_column;               ///< ids for the predictions ("": the row's 0-based position, SemEval's)
  /// A tagger: a word's probability to be toxic; a classifier: a word's share of the text's highest
  /// attention. In (0, 1].
  double threshold = 0.5;
  std::int64_t batch_size = 64;
  std::string predictions;  ///< a CSV of id, spans (SemEval's submission), when not ""
  std::string json;         ///< the figures (and each row's offsets) as JSON, when not ""
};

/// One text's toxic characters by `weights` (a weight per word of word_ranges(text)): the words at
/// or above threshold x the highest weight (none when every weight is 0).
std::vector<std::int64_t> attended_offsets(const std::string& text, const std::vector<double>& weights, double threshold);

/// Runs the request; returns the summary attn spans prints. Bad input (a missing column, a spans
/// cell that is not a list of offsets in the text, a model that is not a text classifier, a
/// threshold outside (0, 1]) throws naming the file, line, column or flag.
std::string spans(const SpansRequest& request);

}  // namespace attn::analyses
