#pragma once
/// Documents as sentences of words, for hierarchical models (Yang et al. 2016): a text is split
/// into sentences with ICU's sentence BreakIterator, each sentence is read by the (Keras)
/// tokenizer, and the document becomes one row of ids in which every word carries its sentence:
///
///   id = word id + 2^20 x sentence          (0 = padding; sentence = the rank among the sentences read)
///
/// so a row is still a flat sequence of word ids [T] that pads, batches, truncates for leave-one-out
/// (a removed word is 0, its sentence stays) and crosses into TorchScript like any other, while the
/// model rebuilds documents -> sentences -> words from it. The tokenizer (and tokenizer.json) is
/// the one the single-level models use: it is fitted on whole texts.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attn/text/tokenizer.h"

namespace attn::text {

/// The bits of an id below the sentence: word ids must be below 2^20 (num_words <= 1,048,576).
constexpr int kSentenceShift = 20;
constexpr std::int32_t kWordIdLimit = std::int32_t{1} << kSentenceShift;
/// Sentences a row can hold with 32-bit ids.
constexpr std::int64_t kSentenceLimit = 2047;

constexpr std::int32_t encode_word(std::int32_t word, std::int64_t sentence) {
  return word + static_cast<std::int32_t>(sentence << kSentenceShift);
}
constexpr std::int32_t word_of(std::int64_t id) { return static_cast<std::int32_t>(id & (kWordIdLimit - 1)); }
constexpr std::int64_t sentence_of(std::int64_t id) { return id >> kSentenceShift; }

/// How much of a document a hierarchical model reads: its first `max_sentences` sentences that keep
/// a word, and of each the first `max_words` words (0: not a hierarchical layout).
struct SentenceLayout {
  std::int64_t max_sentences = 0, max_words = 0;
  bool enabled() const { return max_sentences > 0; }
};
void to_json(nlohmann::json& j, const SentenceLayout& layout);
void from_json(const nlohmann::json& j, SentenceLayout& layout);

/// The byte ranges [begin, end) of `text`'s sentences by ICU's rules (root locale): a sentence ends
/// after its terminator ('.', '?', '!', ...) and the spaces after it, or at a line break; blank
/// lines belong to the sentence before them. Empty text: none. Invalid UTF-8 is read as ICU reads it (replacement characters), never an
/// error.
std::vector<std::pair<std::size_t, std::size_t>> sentence_spans(std::string_view text);

/// One sentence of a document as a hierarchical model reads it.
struct DocumentSentence {
  std::size_t begin = 0, end = 0;  ///< bytes of the text
  Sequence ids;                    ///< the tokenizer's word ids of the sentence, all of them
  /// The sentence's rank among the sentences read (what its ids carry); -1 when not read: it keeps
  /// no word (`empty`) or lies beyond max_sentences.
  std::int64_t index = -1;
  bool empty() const { return ids.empty(); }
};

/// `text` split into sentences and tokenised: every sentence, read or not.
std::vector<DocumentSentence> read_document(const Tokenizer& tokenizer, std::string_view text, const SentenceLayout& layout);
/// Many texts split and tokenised at once (their sentences on `threads` threads), numbered for `layout`.
std::vector<std::vector<DocumentSentence>> read_documents(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                          const SentenceLayout& layout, int threads = 1);
/// The row of ids of a document (above) as `layout` reads it: its first max_sentences sentences that
/// keep a word, each one's first max_words ids carrying its rank among them, in order (whatever
/// layout the sentences were numbered for).
Sequence encode_document(const std::vector<DocumentSentence>& sentences, const SentenceLayout& layout);
/// read_documents then encode_document.
std::vector<Sequence> encode_documents(const Tokenizer& tokenizer, const std::vector<std::string>& texts, const SentenceLayout& layout,
                                       int threads = 1);

/// What a corpus looks like as sentences: per document the sentences that keep a word, per such
/// sentence its word count.
struct SentenceStats {
  std::vector<std::int64_t> sentences_per_document, words_per_sentence;
};
SentenceStats sentence_stats(const std::vector<std::vector<DocumentSentence>>& documents);
SentenceStats sentence_stats(const Tokenizer& tokenizer, const std::vector<std::string>& texts, int threads = 1);
/// The layout that reads most documents whole: the 95th percentile of sentences per document and of
/// words per sentence (numpy's linear interpolation, rounded up), capped at `cap` (at least 1 each).
SentenceLayout layout_from(const SentenceStats& stats, const SentenceLayout& cap = {64, 100});

}  // namespace attn::text
