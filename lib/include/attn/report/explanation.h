#pragma once
/// Explanations as data, and their renderings: JSON (what `attn explain --json` prints and the
/// server returns), text for a terminal, one HTML page for several, SVG pictures. Three shapes
/// cover attn's models:
///   TextExplanation       weights over a text's words (seed 000's get_word_importances, completed)
///   FeatureExplanation    weights over a row's features (seed 001's attention vector)
///   AlignmentExplanation  an output x input attention matrix (seed 002's alignment plot)
/// (A span tagger's explanations, words with their marks: span_explanation.h.)
/// The tasks fill them (lib/src/tasks/); nothing here knows a model.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::report {

/// One importance method's scores (models/attribution.h names the methods): per target (a label, an
/// output character), one score per unit (an entry of "ids", a feature, a source character).
struct Importance {
  std::string method;                      ///< e.g. "integrated-gradients"
  std::vector<std::vector<float>> scores;  ///< [targets][units]
};

/// Integrated gradients' facts, when they were asked for.
struct IntegratedGradients {
  int steps = 0;                        ///< 0: not computed
  std::vector<float> completeness_gap;  ///< per target: sum of the scores - (z(x) - z(baseline))
};

/// How a word of the text reached the model.
enum class WordStatus {
  kKept,      ///< read (some of its tokens, at least)
  kOov,       ///< read as the OOV index
  kSubwords,  ///< not in the model's words, read by its character n-grams alone (a model with subwords)
  kDropped,   ///< unknown, beyond num_words or beyond maxlen: see the reason
  kFiltered,  ///< nothing left after filtering (punctuation, say)
};
/// "kept", "oov", "subwords", "dropped", "filtered": as JSON, text and the page spell it.
const char* status_name(WordStatus status);

/// How a sentence of a document reached a hierarchical model.
enum class SentenceStatus {
  kRead,     ///< read
  kEmpty,    ///< no word the tokenizer keeps
  kDropped,  ///< beyond max_sentences
};
/// "read", "empty", "dropped".
const char* status_name(SentenceStatus status);

/// A word as written in the text, the tokenizer's tokens of it, and the attention they received.
struct WordWeight {
  std::string word;                 ///< a chunk of the text between spaces, tabs, newlines
  std::vector<std::string> tokens;  ///< the tokenizer's tokens of it (lowercased, filtered)
  double weight = 0;                ///< attention summed over its kept tokens
  WordStatus status = WordStatus::kKept;
  std::string reason;
  /// The word's kept tokens: entries first, first + 1, ... of the explanation's ids (count 0: none).
  std::size_t first = 0, count = 0;
};

/// A sentence of a document, as a hierarchical model read it.
struct SentenceWeight {
  std::string text;   ///< the sentence (trailing spaces trimmed)
  double weight = 0;  ///< its sentence attention alpha_i (0 unless read)
  SentenceStatus status = SentenceStatus::kRead;
  std::string reason;          ///< why, unless read
  std::size_t first_word = 0;  ///< its words: entries first_word, ... of the explanation's words
  std::size_t words = 0;
};

struct TextExplanation {
  std::string text;
  std::vector<std::string> label_names;
  std::vector<float> probabilities;  ///< per label
  std::vector<WordWeight> words;     ///< every word of the text, in order
  std::vector<std::int64_t> ids;     ///< the model's input: Keras' texts_to_sequences, cut to maxlen, unpadded
  std::vector<float> attention;      ///< per id; the kept words' weights sum to 1
  /// Hierarchical models: the document's sentences (empty for the others), and per id the word's
  /// weight within its sentence and its sentence's weight (attention = their product).
  std::vector<SentenceWeight> sentences;
  std::vector<float> word_attention, sentence_attention;
  /// Transformer classifiers: per layer, per head, [ids x ids] row-major (query rows, key columns).
  std::vector<std::vector<std::vector<float>>> self_attention;
  /// `attn explain --methods`: each method's scores, [labels][ids]; empty: attention only, as ever.
  std::vector<Importance> importance;
  IntegratedGradients integrated;
  std::size_t shown_label = 0;  ///< the label whose scores text and HTML show
  /// The one label `importance` and `integrated` are for ([1][ids] each; shown_label is it), or -1:
  /// for every label.
  std::int64_t importance_label = -1;
};

struct FeatureExplanation {
  std::vector<std::string> feature_names;
  std::string label_name;
  std::vector<float> values;
  float probability = 0;         ///< of label 1
  std::vector<float> attention;  ///< per feature, sums to 1
  /// `attn explain --methods`: each method's scores, [1][features]; empty: attention only, as ever.
  std::vector<Importance> importance;
  std::vector<float> baseline;  ///< what a removed feature is set to, per feature (with importance)
  std::string baseline_kind;    ///< "training mean" or "zero"
  IntegratedGradients integrated;
};

struct AlignmentExplanation {
  std::string source, output;
  std::vector<std::string> source_tokens;  ///< input characters as the model saw them (lowercased)
  std::vector<std::string> output_tokens;  ///< output characters
  std::vector<float> attention;            ///< [output_tokens x source_tokens] row-major; each row sums to 1
  /// `attn explain --methods`: each method's scores, [output_tokens][source_tokens]; empty: attention only.
  std::vector<Importance> importance;
  IntegratedGradients integrated;
};

nlohmann::ordered_json to_json(const TextExplanation& e);
nlohmann::ordered_json to_json(const FeatureExplanation& e);
nlohmann::ordered_json to_json(const AlignmentExplanation& e);

/// Whether a text's JSON holds its self-attention (a transformer's layers x heads x T x T weights:
/// large; the server sends them on request only).
enum class SelfAttention { kInclude, kOmit };

/// to_json(e).dump() byte for byte, written directly instead of building the document (a text's
/// words one at a time: as a JSON document the 1.8 million words of a 10 MB comment took 3.7 GB),
/// with or without the self-attention.
std::string to_json_line(const TextExplanation& e, SelfAttention self_attention = SelfAttention::kInclude);
std::string to_json_line(const FeatureExplanation& e, SelfAttention self_attention = SelfAttention::kInclude);
std::string to_json_line(const AlignmentExplanation& e, SelfAttention self_attention = SelfAttention::kInclude);

/// Terminal text: probabilities and one line per word with a bar; a row's features with bars; the
/// output and a character heatmap.
std::string to_text(const TextExplanation& e);
std::string to_text(const FeatureExplanation& e);
std::string to_text(const AlignmentExplanation& e);

/// One self-contained HTML page for several explanations.
std::string to_html(const std::vector<TextExplanation>& all);
std::string to_html(const std::vector<FeatureExplanation>& all);
std::string to_html(const std::vector<AlignmentExplanation>& all);

/// SVG pictures: none for texts (their page is the picture); one bar chart for feature rows (the
/// mean weight per feature when there are several); one heatmap per alignment.
std::vector<std::string> to_svg(const std::vector<TextExplanation>& all);
std::vector<std::string> to_svg(const std::vector<FeatureExplanation>& all);
std::vector<std::string> to_svg(const std::vector<AlignmentExplanation>& all);

}  // namespace attn::report
