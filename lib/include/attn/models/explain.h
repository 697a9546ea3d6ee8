#pragma once
/// Seed 000's get_word_importances, completed: the label probabilities of a text, and every word of
/// the text in order with its attention weight. Words the tokenizer drops (unknown, beyond
/// num_words, or only filter characters) are listed as such instead of vanishing; the weights of
/// the kept words sum to 1.
#include <string>
#include <vector>

#include "attn/models/saved_model.h"

namespace attn::models {

struct ExplainedWord {
  std::string word;                 ///< as written (a chunk of the text between spaces, tabs, newlines)
  std::vector<std::string> tokens;  ///< the tokenizer's tokens of it (lowercased, filtered)
  double weight = 0;                ///< attention summed over its kept tokens
  /// "kept"; "oov" (kept as the OOV index); "dropped" (unknown or beyond num_words, see reason);
  /// "filtered" (nothing left after filtering, e.g. punctuation).
  std::string status;
  std::string reason;
};

struct Explanation {
  std::string text;
  std::vector<std::string> label_names;
  std::vector<float> probabilities;
  std::vector<ExplainedWord> words;
  std::vector<std::int64_t> ids;  ///< the model's input: Keras' texts_to_sequences, unpadded
  std::vector<float> attention;   ///< per id
};

/// Runs `model` on `text` (its forward must return (probabilities [1, L], attention [1, T])).
Explanation explain(SavedModel& model, const std::string& text);

}  // namespace attn::models
