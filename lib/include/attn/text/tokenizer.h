#pragma once
/// A port of Keras' `Tokenizer` (keras_preprocessing 1.1) that reproduces it to the token: the same
/// word splitting, Python's full Unicode lowercase, first-seen order among equal counts, the
/// num_words cut (only indices below num_words survive), the oov_token, and the exact
/// `to_json` / `tokenizer_from_json` file format, so tokenizer.json files move both ways.
/// README.md, section "Text pipeline", lists the rules and the edge cases they cover.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/text/string_table.h"

namespace attn::text {

/// Keras' default `filters`: ASCII punctuation except the apostrophe, plus TAB and LF.
inline constexpr std::string_view kDefaultFilters = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n";

/// A tokenised text: word indices (1-based; 0 is the padding index and never assigned).
using Sequence = std::vector<std::int32_t>;

/// The constructor arguments of keras' Tokenizer, with its defaults.
struct TokenizerOptions {
  /// Only indices below num_words are emitted, i.e. the num_words-1 most frequent words (the OOV
  /// token, if any, counts against the limit). Unset or 0: no limit (Keras tests truthiness).
  std::optional<std::int64_t> num_words;
  /// Characters replaced by `split` before splitting (code points, not bytes).
  std::string filters = std::string(kDefaultFilters);
  /// Lowercase with Python's `str.lower()` before anything else.
  bool lower = true;
  /// The only separator (Python `str.split(split)`); must not be empty.
  std::string split = " ";
  /// Tokens are the code points of the (lowercased) text, unfiltered.
  bool char_level = false;
  /// Word given index 1 and emitted for unknown words and words beyond num_words.
  std::optional<std::string> oov_token;
};

/// Token accounting of a texts_to_sequences run (what `attn prepare` reports).
struct TransformStats {
  std::int64_t tokens = 0;             ///< tokens produced by splitting
  std::int64_t beyond_num_words = 0;   ///< known tokens whose index is >= num_words
  std::int64_t unknown = 0;            ///< tokens not in the vocabulary
  std::int64_t emitted = 0;            ///< indices written to sequences (incl. OOV indices)
};

class Tokenizer {
 public:
  /// Throws std::invalid_argument for an empty `split`.
  explicit Tokenizer(TokenizerOptions options = {});

  const TokenizerOptions& options() const { return options_; }

  /// Keras' `text_to_word_sequence` (or the code points when char_level): lower, filter, split,
  /// drop empty strings. `text` must be valid UTF-8.
  std::vector<std::string> tokenize(std::string_view text) const;

  /// Cumulative fit, as Keras: counts, document frequencies and first-seen order accumulate over
  /// calls, then the index is rebuilt over everything seen. `threads` > 1 splits the texts into
  /// contiguous chunks and merges them in order, which gives exactly the sequential result.
  void fit_on_texts(const std::vector<std::string>& texts, int threads = 1);

  /// Keras' texts_to_sequences. `stats`, when given, is incremented.
  std::vector<Sequence> texts_to_sequences(const std::vector<std::string>& texts, int threads = 1,
                                           TransformStats* stats = nullptr) const;

  /// fit_on_texts(texts) followed by texts_to_sequences(texts), tokenising every text only once.
  std::vector<Sequence> fit_transform(const std::vector<std::string>& texts, int threads = 1,
                                      TransformStats* stats = nullptr);

  /// Keras' sequences_to_texts: words joined by one space; indices >= num_words and indices
  /// without a word (0 included) become the OOV word when there is one, else are dropped.
  std::vector<std::string> sequences_to_texts(const std::vector<Sequence>& sequences) const;

  /// Keras' `to_json()` byte for byte (key order, double-encoded tables, ASCII escapes). The one
  /// table whose order Keras leaves to Python's string hash, word_docs (and index_docs after it),
  /// is written in first-seen order.
  std::string to_json() const;

  /// Keras' `tokenizer_from_json`. Errors (std::invalid_argument) name `source` and the key.
  static Tokenizer from_json(std::string_view json, const std::string& source = "tokenizer.json");

  // ---- The fitted tables, as Keras exposes them ----
  std::int64_t document_count() const { return document_count_; }
  /// len(word_counts): distinct words seen in fitting.
  std::int32_t vocabulary_size() const { return vocab_.size(); }
  /// The i-th word of word_counts (first-seen order).
  std::string_view vocabulary_word(std::int32_t i) const { return vocab_.key(i); }
  /// word_counts[word], 0 when absent.
  std::int64_t word_count(std::string_view word) const;
  /// word_docs[word], 0 when absent.
  std::int64_t word_docs(std::string_view word) const;
  /// word_index.get(word).
  std::optional<std::int32_t> word_index(std::string_view word) const;
  /// index_word.get(index).
  std::optional<std::string> index_word(std::int32_t index) const;
  /// Largest assigned index (len(word_index) for a Keras-built table).
  std::int32_t max_index() const { return static_cast<std::int32_t>(index_word_.size()) - 1; }

 private:
  struct Scratch {
    std::string lowered, filtered;
  };
  template <class OnToken>
  void for_each_token(std::string_view text, Scratch& scratch, OnToken&& on_token) const;
  struct FitChunk;
  /// Fits in parallel chunks; keep_tokens also keeps each text's tokens (as chunk-local ids).
  std::vector<FitChunk> fit_chunks(const std::vector<std::string>& texts, int threads, bool keep_tokens);
  void rebuild_index();
  /// The emitted index of a token with vocabulary id `id` (kMissing = unknown), or 0 to drop it.
  std::int32_t emit_index(std::int32_t id, TransformStats& stats) const;
  bool contains_filter(std::uint32_t code_point) const;

  TokenizerOptions options_;
  // Splitting plan: when `split` is one ASCII byte and every filter is ASCII, filters and the
  // separator are all single-byte delimiters (exact, since ASCII bytes never occur inside
  // multi-byte UTF-8). Otherwise the general path replaces code points and splits on the string.
  bool byte_delimiters_ = false;
  bool is_delimiter_[256] = {};
  std::vector<std::uint32_t> filter_code_points_;  // sorted

  StringTable vocab_;                       // word_counts keys, first-seen order
  std::vector<std::int64_t> counts_, docs_;  // by vocabulary id
  std::int64_t document_count_ = 0;
  std::vector<std::int32_t> index_of_;  // vocabulary id -> word_index value (0: none)
  static constexpr std::int32_t kNoWord = -1, kOovWord = -2;
  std::vector<std::int32_t> index_word_;  // index -> vocabulary id | kOovWord | kNoWord
  std::int32_t oov_index_ = 0;            // word_index.get(oov_token), 0 when none
};

}  // namespace attn::text
