#pragma once
/// Seed 000's get_word_importances, completed: the label probabilities of a text, and every word of
/// the text in order with its attention weight. Words the tokenizer drops (unknown, beyond
/// num_words, or only filter characters) and words cut by maxlen (as the training data was cut)
/// are listed as such instead of vanishing; the weights of the kept words sum to 1.
#include <string>
#include <vector>

#include "attn/models/saved_model.h"

namespace attn::models {

struct ExplainedWord {
  std::string word;                 ///< as written (a chunk of the text between spaces, tabs, newlines)
  std::vector<std::string> tokens;  ///< the tokenizer's tokens of it (lowercased, filtered)
  double weight = 0;                ///< attention summed over its kept tokens
  /// "kept"; "oov" (kept as the OOV index); "dropped" (unknown, beyond num_words or beyond maxlen,
  /// see reason);
  /// "filtered" (nothing left after filtering, e.g. punctuation).
  std::string status;
  std::string reason;
};

struct Explanation {
  std::string text;
  std::vector<std::string> label_names;
  std::vector<float> probabilities;
  std::vector<ExplainedWord> words;
  std::vector<std::int64_t> ids;  ///< the model's input: Keras' texts_to_sequences, cut to maxlen, unpadded
  std::vector<float> attention;   ///< per id
  /// transformer-classifier: per layer, per head, [ids x ids] row-major (query rows, key columns).
  std::vector<std::vector<std::vector<float>>> self_attention;
};

/// Runs `model` on `text` (its forward must return (probabilities [1, L], attention [1, T])).
/// A model with a self_attention method (transformer-classifier) also fills `self_attention`.
Explanation explain(SavedModel& model, const std::string& text);

/// feature-attention on one row: the probability of label 1 and each feature's attention weight.
struct FeatureExplanation {
  std::vector<std::string> feature_names;
  std::string label_name;
  std::vector<float> values;
  float probability = 0;
  std::vector<float> attention;  ///< per feature, sums to 1
};
/// `values` holds rows of the model's feature count, row-major.
std::vector<FeatureExplanation> explain_features(SavedModel& model, const std::vector<float>& values);

/// seq2seq-attention on one input: the greedy output and where each output character looked.
struct TranslationExplanation {
  std::string source, output;
  std::vector<std::string> source_tokens;  ///< the source tokenizer's characters (lowercased)
  std::vector<std::string> output_tokens;  ///< the output's characters
  std::vector<float> attention;            ///< [output_tokens, source_tokens] row-major; each row sums to 1
};
std::vector<TranslationExplanation> explain_translations(SavedModel& model, const std::vector<std::string>& texts);

}  // namespace attn::models
