// Documents as sentences of words (sentences.h): ICU's sentence boundaries, the Keras tokenizer per
// sentence, and the row of ids that carries each word's sentence.
#include "attn/text/sentences.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include <unicode/brkiter.h>
#include <unicode/utext.h>
#include <nlohmann/json.hpp>

namespace attn::text {

void to_json(nlohmann::json& j, const SentenceLayout& l) { j = {{"max_sentences", l.max_sentences}, {"max_words", l.max_words}}; }

void from_json(const nlohmann::json& j, SentenceLayout& l) {
  l.max_sentences = j.at("max_sentences").get<std::int64_t>();
  l.max_words = j.at("max_words").get<std::int64_t>();
  if (l.max_sentences < 0 || l.max_sentences > kSentenceLimit || l.max_words < 0 || (l.max_sentences > 0) != (l.max_words > 0))
    throw std::invalid_argument("sentences: max_sentences must be in 0.." + std::to_string(kSentenceLimit) +
                                " and max_words positive with it, got " + j.dump());
}

std::vector<std::pair<std::size_t, std::size_t>> sentence_spans(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  if (text.empty()) return spans;
  UErrorCode status = U_ZERO_ERROR;
  // UTF-8 text read in place: the iterator's positions are byte offsets.
  std::unique_ptr<UText, decltype(&utext_close)> ut(utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status),
                                                    &utext_close);
  std::unique_ptr<icu::BreakIterator> it(icu::BreakIterator::createSentenceInstance(icu::Locale::getRoot(), status));
  if (U_FAILURE(status) || !it) throw std::runtime_error(std::string("ICU sentence iterator: ") + u_errorName(status));
  it->setText(ut.get(), status);
  if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU sentence iterator: ") + u_errorName(status));
  std::int32_t begin = it->first();
  for (std::int32_t end = it->next(); end != icu::BreakIterator::DONE; begin = end, end = it->next()) {
    const auto b = static_cast<std::size_t>(begin), e = static_cast<std::size_t>(end);
    const bool blank =
        std::all_of(text.begin() + b, text.begin() + e, [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
    if (blank && !spans.empty())
      spans.back().second = e;  // a blank line belongs to the sentence before it
    else
      spans.emplace_back(b, e);
  }
  return spans;
}

namespace {

/// Marks which sentences are read: those keeping a word, up to max_sentences of them.
void number_sentences(std::vector<DocumentSentence>& sentences, const SentenceLayout& layout) {
  std::int64_t next = 0;
  for (DocumentSentence& s : sentences) s.index = !s.empty() && next < layout.max_sentences ? next++ : -1;
}

/// Every text's sentences (spans, no ids yet) and the sentences' texts in one list.
std::vector<std::vector<DocumentSentence>> split_all(const std::vector<std::string>& texts, std::vector<std::string>& sentence_texts) {
  std::vector<std::vector<DocumentSentence>> docs(texts.size());
  for (std::size_t d = 0; d < texts.size(); ++d)
    for (const auto& [b, e] : sentence_spans(texts[d])) {
      docs[d].push_back(DocumentSentence{b, e, {}, -1});
      sentence_texts.emplace_back(texts[d], b, e - b);
    }
  return docs;
}

/// split_all, then every sentence tokenised (on `threads`).
std::vector<std::vector<DocumentSentence>> read_all(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                    const SentenceLayout& layout, int threads) {
  std::vector<std::string> sentence_texts;
  std::vector<std::vector<DocumentSentence>> docs = split_all(texts, sentence_texts);
  std::vector<Sequence> ids = tokenizer.texts_to_sequences(sentence_texts, threads);
  std::size_t next = 0;
  for (auto& doc : docs) {
    for (DocumentSentence& s : doc) s.ids = std::move(ids[next++]);
    number_sentences(doc, layout);
  }
  return docs;
}

}  // namespace

std::vector<DocumentSentence> read_document(const Tokenizer& tokenizer, std::string_view text, const SentenceLayout& layout) {
  return std::move(read_all(tokenizer, {std::string(text)}, layout, 1).front());
}

std::vector<std::vector<DocumentSentence>> read_documents(const Tokenizer& tokenizer, const std::vector<std::string>& texts,
                                                          const SentenceLayout& layout, int threads) {
  return read_all(tokenizer, texts, layout, threads);
}

Sequence encode_document(const std::vector<DocumentSentence>& sentences, const SentenceLayout& layout) {
  Sequence row;
  std::int64_t index = 0;  // number_sentences' rule, for this layout
  for (const DocumentSentence& s : sentences) {
    if (s.empty()) continue;
    if (index >= layout.max_sentences) break;
    const auto n = std::min<std::size_t>(s.ids.size(), static_cast<std::size_t>(layout.max_words));
    for (std::size_t t = 0; t < n; ++t) {
      if (s.ids[t] >= kWordIdLimit)
        throw std::invalid_argument("word id " + std::to_string(s.ids[t]) + " does not fit a sentence layout (num_words above 2^20)");
      row.push_back(encode_word(s.ids[t], index));
    }
    ++index;
  }
  return row;
}

std::vector<Sequence> encode_documents(const Tokenizer& tokenizer, const std::vector<std::string>& texts, const SentenceLayout& layout,
                                       int threads) {
  if (!layout.enabled()) throw std::invalid_argument("encode_documents: no sentence layout");
  std::vector<Sequence> rows;
  rows.reserve(texts.size());
  for (const auto& doc : read_all(tokenizer, texts, layout, threads)) rows.push_back(encode_document(doc, layout));
  return rows;
}

SentenceStats sentence_stats(const Tokenizer& tokenizer, const std::vector<std::string>& texts, int threads) {
  return sentence_stats(read_all(tokenizer, texts, {kSentenceLimit, 1}, threads));
}

SentenceStats sentence_stats(const std::vector<std::vector<DocumentSentence>>& documents) {
  SentenceStats stats;
  for (const auto& doc : documents) {
    std::int64_t kept = 0;
    for (const DocumentSentence& s : doc)
      if (!s.empty()) {
        ++kept;
        stats.words_per_sentence.push_back(static_cast<std::int64_t>(s.ids.size()));
      }
    stats.sentences_per_document.push_back(kept);
  }
  return stats;
}

namespace {

/// numpy.percentile's default (linear interpolation), rounded up; 0 for no values.
std::int64_t percentile_up(std::vector<std::int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double value = static_cast<double>(v[lo]) + (pos - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]);
  return static_cast<std::int64_t>(std::ceil(value - 1e-9));
}

}  // namespace

SentenceLayout layout_from(const SentenceStats& stats, const SentenceLayout& cap) {
  SentenceLayout l;
  l.max_sentences =
      std::clamp<std::int64_t>(percentile_up(stats.sentences_per_document, 95), 1, std::max<std::int64_t>(1, cap.max_sentences));
  l.max_words = std::clamp<std::int64_t>(percentile_up(stats.words_per_sentence, 95), 1, std::max<std::int64_t>(1, cap.max_words));
  return l;
}

}  // namespace attn::text
