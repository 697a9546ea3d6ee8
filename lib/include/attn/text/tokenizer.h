#pragma once
/// A port of Keras' `Tokenizer` (keras_preprocessing 1.1) that reproduces it to the token: the same
/// word splitting, Python's full Unicode lowercase, first-seen order among equal counts, the
/// num_words cut (only indices below num_words survive), the oov_token, and the exact
/// `to_json` / `tokenizer_from_json` file format, so tokenizer.json files move both ways.
/// docs/commands.md, section "Text pipeline", lists the rules and the edge cases they cover.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attn/text/packed_texts.h"

#include "attn/text/string_table.h"
#include "attn/text/word_splitter.h"

namespace attn::text {

/// A tokenised text: word indices (1-based; 0 is the padding index and never assigned).
using Sequence = std::vector<std::int32_t>;

/// Many sequences in one buffer (the bulk form): sequence i is ids[offsets[i], offsets[i+1]).
struct SequenceBatch {
  std::vector<std::int32_t> ids;
  std::vector<std::int64_t> offsets{0};

  std::size_t size() const { return offsets.size() - 1; }
  std::int64_t length(std::size_t i) const { return offsets[i + 1] - offsets[i]; }
  const std::int32_t* row(std::size_t i) const { return ids.data() + offsets[i]; }
  std::vector<Sequence> to_sequences() const;
};

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
  /// Texts read through text/deobfuscate.h before splitting (attn train --deobfuscate). Not a Keras
  /// setting: tokenizer.json does not hold it (the model's config.json does), so Keras reads the file.
  bool deobfuscate = false;
};

/// What Tokenizer::from_json reads: every table (the default: the tokenizer can then be saved and
/// fitted further), or only what applying it needs (config and word_index: texts_to_sequences,
/// word_index(), index_word(), sequences_to_texts; word_count(), word_docs(), to_json() and the
/// fit methods then throw std::logic_error). A model that only scores texts loads the second,
/// several times faster for a large vocabulary.
enum class TokenizerTables { kAll, kForTransform };

/// Token accounting of a transform (what `attn prepare` reports).
struct TransformStats {
  std::int64_t tokens = 0;            ///< tokens produced by splitting
  std::int64_t beyond_num_words = 0;  ///< known tokens whose index is >= num_words
  std::int64_t unknown = 0;           ///< tokens not in the vocabulary
  std::int64_t emitted = 0;           ///< indices written to sequences (incl. OOV indices)
  TransformStats& operator+=(const TransformStats& o);
};

class Tokenizer {
 public:
  /// Throws std::invalid_argument for an empty `split`.
  explicit Tokenizer(TokenizerOptions options = {});
  Tokenizer(const Tokenizer&);
  Tokenizer& operator=(const Tokenizer&);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  const TokenizerOptions& options() const { return options_; }
  /// Reads texts through text/deobfuscate.h from now on (a model trained with --deobfuscate: its
  /// tokenizer.json, Keras' format, cannot say so).
  void read_deobfuscated(bool on);

  /// Keras' `text_to_word_sequence` (or the code points when char_level). `text` must be UTF-8.
  /// Reading deobfuscated, a fitted tokenizer lends deobfuscate its vocabulary (known_words).
  std::vector<std::string> tokenize(std::string_view text) const;

  /// Cumulative fit, as Keras: counts, document frequencies and first-seen order accumulate over
  /// calls, then the index is rebuilt over everything seen. Any thread count gives the same result.
  void fit_on_texts(const std::vector<std::string>& texts, int threads = 1);

  /// Keras' texts_to_sequences. `stats`, when given, is incremented.
  std::vector<Sequence> texts_to_sequences(const std::vector<std::string>& texts, int threads = 1, TransformStats* stats = nullptr) const;

  /// fit_on_texts(texts) then texts_to_sequences(texts), tokenising every text once (twice when
  /// reading deobfuscated: the sequences are read with the fitted vocabulary, known_words).
  SequenceBatch fit_transform(const std::vector<std::string>& texts, int threads = 1, TransformStats* stats = nullptr);

  /// Keras' sequences_to_texts: words joined by one space; indices >= num_words and indices
  /// without a word (0 included) become the OOV word when there is one, else are dropped.
  std::vector<std::string> sequences_to_texts(const std::vector<Sequence>& sequences) const;

  /// Streaming fit_transform or transform: the caller add()s blocks of texts (reading a file, say)
  /// while `threads` workers tokenise them; finish() merges and returns every text's sequence in
  /// order. Equal to the one-shot calls above for any block sizes and thread count.
  class Stream {
   public:
    Stream(Stream&&) noexcept;
    ~Stream();
    /// Adds texts (owned by the stream, freed once tokenised; a fitting stream that reads
    /// deobfuscated and returns sequences keeps them until finish(), to read them again).
    void add(std::vector<std::string> texts);
    /// Adds texts (owned by the stream, as above).
    void add(PackedTexts texts);
    /// Adds texts[0, count) that the caller keeps alive until finish() returns.
    void add_borrowed(const std::string* texts, std::size_t count);
    /// Waits for the workers; a fitting stream then updates the tokenizer and calls `fitted` (if
    /// given) as soon as the tokenizer is complete, before the sequences are made (to start saving
    /// it, say). `stats` is incremented.
    SequenceBatch finish(TransformStats* stats = nullptr, const std::function<void()>& fitted = {});

   private:
    friend class Tokenizer;
    struct Impl;
    explicit Stream(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
  };
  /// A stream that fits on its texts (cumulatively) and returns their sequences. Without
  /// `sequences` (a caller that only fits), a stream reading deobfuscated does not read its texts
  /// again with the fitted vocabulary: finish()'s sequences are those read while fitting.
  Stream fit_stream(int threads, bool sequences = true);
  /// A stream that only applies the fitted tokenizer (which must outlive it).
  Stream transform_stream(int threads) const;

  /// Keras' `to_json()` byte for byte (key order, double-encoded tables, ASCII escapes). The one
  /// table whose order Keras leaves to Python's string hash, word_docs (and index_docs after it),
  /// is written in first-seen order.
  std::string to_json() const;

  /// Keras' `tokenizer_from_json`. Errors (std::runtime_error: a bad file) name `source` and the key.
  static Tokenizer from_json(std::string_view json, const std::string& source = "tokenizer.json",
                             TokenizerTables tables = TokenizerTables::kAll);

  // ---- The fitted tables, as Keras exposes them ----
  std::int64_t document_count() const { return document_count_; }
  /// len(word_counts): distinct words seen in fitting.
  std::int32_t vocabulary_size() const { return vocab_.size(); }
  /// word_counts[word], 0 when absent.
  std::int64_t word_count(std::string_view word) const;
  /// word_docs[word], 0 when absent.
  std::int64_t word_docs(std::string_view word) const;
  /// word_index.get(word).
  std::optional<std::int32_t> word_index(std::string_view word) const;
  /// index_word.get(index).
  std::optional<std::string> index_word(std::int32_t index) const;
  /// Indices below this may have a word (every index word_index gives is); none above.
  std::int32_t index_limit() const { return static_cast<std::int32_t>(index_word_.size()); }

 private:
  void rebuild_index();
  /// The emitted index of a token with vocabulary id `id` (kMissing = unknown), or 0 to drop it.
  std::int32_t emit_index(std::int32_t id, TransformStats& stats) const;
  /// Throws std::logic_error naming `what` unless every table was loaded.
  void require_all_tables(const char* what) const;
  /// deobfuscate's vocabulary: the words read as themselves (an index below num_words, not the OOV
  /// token) and their index as rank; nothing when not reading deobfuscated or not fitted. Fitting
  /// reads without it (the vocabulary is what it makes); everything read after fitting, with it.
  /// It reads this tokenizer: valid while the tokenizer lives unchanged.
  std::optional<KnownWords> known_words() const;
  /// Makes skeletons_ for the index as it is now (none unless reading deobfuscated).
  void index_skeletons();

  TokenizerOptions options_;
  WordSplitter splitter_;
  StringTable vocab_;                        // word_counts keys, first-seen order
  std::vector<std::int64_t> counts_, docs_;  // by vocabulary id
  std::int64_t document_count_ = 0;
  std::vector<std::int32_t> index_of_;  // vocabulary id -> word_index value (0: none)
  static constexpr std::int32_t kNoWord = -1, kOovWord = -2;
  std::vector<std::int32_t> index_word_;            // index -> vocabulary id | kOovWord | kNoWord
  std::int32_t oov_index_ = 0;                      // word_index.get(oov_token), 0 when none
  TokenizerTables tables_ = TokenizerTables::kAll;  // what from_json read
  // Reading deobfuscated: consonant skeleton -> the smallest index of a known word with it.
  std::shared_ptr<const std::unordered_map<std::string, std::int32_t>> skeletons_;
};

}  // namespace attn::text
