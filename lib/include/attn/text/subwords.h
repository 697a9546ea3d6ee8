#pragma once
/// Subword vectors (Bojanowski et al. 2017, fastText): a word is also the bag of its character
/// n-grams, n = 3..6, of "<word>" ('<' and '>' mark its ends), each hashed into one of `buckets`
/// rows. A word the vocabulary does not hold, misspelt ("stuuupid", "id1ot") or never seen, still
/// has n-grams it shares with the words it resembles. The hash and the n-grams are fastText's, byte
/// for byte: FNV-1a (32 bits) over the UTF-8 bytes, each byte sign-extended first (fastText casts it
/// to int8_t), n counted in characters (a character's continuation bytes stay with it). The same
/// rule runs as TorchScript in the models that read subwords (models/subword_embedding.h), which
/// is how Python computes them.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attn/text/tokenizer.h"

namespace attn::text {

/// The n-gram lengths, in characters: fastText's defaults (minn 3, maxn 6).
constexpr std::int64_t kSubwordMinN = 3, kSubwordMaxN = 6;
/// Hash rows when --subwords is given without a count.
constexpr std::int64_t kDefaultSubwordBuckets = 32768;

/// fastText's hash: FNV-1a over the bytes, each sign-extended to 32 bits (bytes >= 0x80 differ from
/// plain FNV-1a).
std::uint32_t fasttext_hash(std::string_view bytes);

/// A word's consonant skeleton: its ASCII vowels (a, e, i, o, u, either case) after the first byte
/// dropped: stupid -> stpd, idiot -> idt. People write words so to slip them past a filter ("stpd",
/// "f*ck" once --deobfuscate has dropped the '*'); the skeleton is what such a word shares with the
/// word it stands for.
std::string consonant_skeleton(std::string_view word);

/// Whether `word` has an ASCII vowel after its first byte: whether consonant_skeleton changes it,
/// without building the skeleton.
bool has_vowel_after_first(std::string_view word);

/// The n-gram rows of `word`: 1 + hash % buckets for each n-gram of "<word>", in fastText's order
/// (by start, then length); 0 is no n-gram (padding). With `skeletons` (attn train --skeletons),
/// then the rows of the n-grams of "<skeleton>" too, when the word's consonant skeleton is not the
/// word itself: "stupid" then shares every row of "stpd". `buckets` must be >= 1.
std::vector<std::int32_t> subword_rows(std::string_view word, std::int64_t buckets, bool skeletons = false);

/// A model's words with their subwords. Its ids are the tokenizer's word_index for every word it
/// holds (not only those below num_words), and ids after the tokenizer's last for words it does not
/// hold, numbered in the order they are met: every token of a text keeps its place. A model reads an
/// id as its word row (ids below num_words; else the OOV index, or none) and its n-gram rows.
class SubwordVocabulary {
 public:
  /// `skeletons`: a word's rows include its consonant skeleton's n-grams (subword_rows).
  SubwordVocabulary(std::shared_ptr<const Tokenizer> tokenizer, std::int64_t buckets, bool skeletons = false);

  /// Every token of `text` (Keras' word splitting) as an id; a new word gets the next id.
  Sequence encode(std::string_view text);
  std::vector<Sequence> encode(const std::vector<std::string>& texts);

  /// The word an id stands for (empty for 0 and unknown ids).
  std::string word(std::int32_t id) const;
  /// The model's word row of an id: the id itself below num_words; otherwise the tokenizer's OOV
  /// index when it has one, else 0 (the word is read by its n-grams alone).
  std::int32_t word_row(std::int32_t id) const;
  /// The n-gram rows of an id's word (empty for 0).
  std::vector<std::int32_t> rows(std::int32_t id) const {
    return id == 0 ? std::vector<std::int32_t>() : subword_rows(word(id), buckets_, skeletons_);
  }

  std::int64_t buckets() const { return buckets_; }
  bool skeletons() const { return skeletons_; }
  /// Ids below this are the tokenizer's; the words met since are numbered from here.
  std::int32_t first_new_id() const { return first_new_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  /// Words met that the tokenizer does not hold.
  std::int64_t new_words() const { return static_cast<std::int64_t>(new_words_.size()); }
  /// Those words, in the order of their ids (from first_new_id()): encoding them again, in this
  /// order, into a new vocabulary of the same tokenizer gives them the same ids.
  const std::vector<std::string>& met_words() const { return new_words_; }

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::int64_t buckets_;
  bool skeletons_;
  std::int32_t first_new_, num_words_, oov_index_;
  std::vector<std::string> new_words_;
  std::unordered_map<std::string, std::int32_t> new_ids_;
};

}  // namespace attn::text
