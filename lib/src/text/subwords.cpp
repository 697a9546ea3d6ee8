// fastText's character n-grams and a model's words with their subwords (see subwords.h).
#include "attn/text/subwords.h"

#include <stdexcept>

namespace attn::text {

std::uint32_t fasttext_hash(std::string_view bytes) {
  std::uint32_t h = 2166136261u;  // FNV-1a's offset basis
  for (const char c : bytes) {
    h ^= static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::int8_t>(c)));  // sign-extended, as fastText
    h *= 16777619u;                                                                           // FNV's 32-bit prime
  }
  return h;
}

namespace {
constexpr std::string_view kVowels = "aeiouAEIOU";
}  // namespace

std::string consonant_skeleton(std::string_view word) {
  std::string out(word.substr(0, 1));
  for (std::size_t i = 1; i < word.size(); ++i)
    if (kVowels.find(word[i]) == std::string_view::npos) out.push_back(word[i]);
  return out;
}

bool has_vowel_after_first(std::string_view word) { return word.find_first_of(kVowels, 1) != std::string_view::npos; }

namespace {

// fastText's n-grams of "<word>", each hashed to its row, appended to `rows`.
void add_ngram_rows(std::string_view word, std::int64_t buckets, std::vector<std::int32_t>& rows) {
  const std::string marked = "<" + std::string(word) + ">";
  const auto continuation = [&](std::size_t i) { return (static_cast<unsigned char>(marked[i]) & 0xC0) == 0x80; };
  for (std::size_t start = 0; start < marked.size(); ++start) {
    if (continuation(start)) continue;  // n-grams start on a character
    std::size_t end = start;
    for (std::int64_t n = 1; n <= kSubwordMaxN && end < marked.size(); ++n) {
      ++end;
      while (end < marked.size() && continuation(end)) ++end;  // the character's other bytes
      if (n >= kSubwordMinN)
        rows.push_back(static_cast<std::int32_t>(1 + fasttext_hash(std::string_view(marked).substr(start, end - start)) %
                                                         static_cast<std::uint32_t>(buckets)));
    }
  }
}

}  // namespace

std::vector<std::int32_t> subword_rows(std::string_view word, std::int64_t buckets, bool skeletons) {
  if (buckets < 1) throw std::invalid_argument("subword_rows: buckets must be >= 1");
  std::vector<std::int32_t> rows;
  add_ngram_rows(word, buckets, rows);
  if (skeletons) {
    const std::string skeleton = consonant_skeleton(word);
    if (skeleton != word) add_ngram_rows(skeleton, buckets, rows);
  }
  return rows;
}

SubwordVocabulary::SubwordVocabulary(std::shared_ptr<const Tokenizer> tokenizer, std::int64_t buckets, bool skeletons)
    : tokenizer_(std::move(tokenizer)), buckets_(buckets), skeletons_(skeletons) {
  if (!tokenizer_) throw std::invalid_argument("SubwordVocabulary: no tokenizer");
  if (buckets_ < 1 || buckets_ > (std::int64_t{1} << 30)) throw std::invalid_argument("subwords: buckets must be in 1..2^30");
  first_new_ = tokenizer_->index_limit();
  num_words_ = static_cast<std::int32_t>(tokenizer_->options().num_words.value_or(0));
  const auto& oov = tokenizer_->options().oov_token;
  oov_index_ = oov ? tokenizer_->word_index(*oov).value_or(0) : 0;
}

Sequence SubwordVocabulary::encode(std::string_view text) {
  Sequence ids;
  for (std::string& token : tokenizer_->tokenize(text)) {
    if (const auto known = tokenizer_->word_index(token)) {
      ids.push_back(*known);
      continue;
    }
    const auto [it, added] = new_ids_.try_emplace(token, first_new_ + static_cast<std::int32_t>(new_words_.size()));
    if (added) new_words_.push_back(std::move(token));
    ids.push_back(it->second);
  }
  return ids;
}

std::vector<Sequence> SubwordVocabulary::encode(const std::vector<std::string>& texts) {
  std::vector<Sequence> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(encode(t));
  return out;
}

std::string SubwordVocabulary::word(std::int32_t id) const {
  if (id >= first_new_) {
    const auto i = static_cast<std::size_t>(id - first_new_);
    return i < new_words_.size() ? new_words_[i] : std::string();
  }
  return tokenizer_->index_word(id).value_or(std::string());
}

std::int32_t SubwordVocabulary::word_row(std::int32_t id) const {
  if (id <= 0) return 0;
  if (id < first_new_ && (num_words_ == 0 || id < num_words_)) return id;  // a word of the tokenizer's, below num_words
  return oov_index_;
}

}  // namespace attn::text
