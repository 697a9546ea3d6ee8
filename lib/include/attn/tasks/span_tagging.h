#pragma once
/// Span tagging (bilstm-tagger; SemEval-2021 Task 5, Toxic Spans): a CSV's text column and, per row,
/// the characters people marked (a `spans` column of code point offsets, "[3, 4, 5]"; "[]" none).
/// Texts are tokenised as a text classifier's (Keras' Tokenizer, every token with its character
/// n-grams); a token's target is 1 when people marked any character of its word (a run of the text
/// between spaces, tabs and newlines: text/char_spans.h), the loss the binary cross-entropy per
/// token. A word's probability is its tokens' highest; the words at or above the threshold become
/// characters as text/char_spans.h says (their letters, the gap between two marked neighbours),
/// which is what the task's character F1 (metrics/spans.h) scores. The threshold is chosen on the
/// held-out rows once training is done (--logit-adjustment span-f1, moved into the output bias: the
/// saved model then marks a word at probability 0.5).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tasks/task.h"

namespace attn::tasks {

/// config.json's "data" block of a span tagger.
struct SpanDataConfig {
  std::string csv;  ///< the run's copy of the training CSV (or --val-csv's)
  std::int64_t rows = 0;
  std::string text_column = "text";
  std::string spans_column = "spans";
  std::int64_t maxlen = 0;                       ///< tokens read of a text at most: the longest training text's, at most kMostTokens
  std::int64_t num_words = 20000;                ///< the tokenizer's num_words: word rows of the embedding
  std::int64_t subword_buckets = 0;              ///< character n-gram rows (text/subwords.h)
  std::vector<std::string> labels = {"marked"};  ///< the one output, as logit adjustment names it
  std::vector<std::string> examples;             ///< a few training texts (the explain page's examples)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SpanDataConfig, csv, rows, text_column, spans_column, maxlen, num_words, subword_buckets,
                                                labels, examples)

/// The most tokens a span tagger reads of a text (Toxic Spans' longest post has about 250).
constexpr std::int64_t kMostTokens = 1000;

const Task& span_tagging();

}  // namespace attn::tasks
