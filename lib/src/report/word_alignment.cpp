// Word alignment (see word_alignment.h).
#include "attn/report/word_alignment.h"

#include <cctype>
#include <optional>
#include <stdexcept>
#include <utility>

namespace attn::report {
namespace {

/// The text's chunks between the default separators (space, tab, newline).
std::vector<std::string> chunks_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

/// Where a piece of text's ids sit in an explanation: the piece's tokenizer emits `all` ids, the
/// model reads those but the first `cut_front` and the last `cut_back`, from entry `offset` of e.ids.
struct IdSpan {
  std::size_t all = 0, cut_front = 0, cut_back = 0, offset = 0;
  std::string cut_reason;  ///< a cut word's reason
  bool subwords = false;   ///< every token has an id (a model with subwords)
};

/// The words of `text` and each one's tokens: its chunks between spaces, which with the default
/// separators tokenize to the text's tokens in order; with other separators, one word per token.
std::pair<std::vector<std::string>, std::vector<std::vector<std::string>>> words_and_tokens(const text::Tokenizer& tok,
                                                                                            const std::string& text) {
  // (Temporaries are moved, not copied: a 10 MB comment has 1.8 million words.)
  std::vector<std::string> all_tokens = tok.tokenize(text);
  std::vector<std::vector<std::string>> per_chunk;
  std::vector<std::string> chunks = chunks_of(text);
  per_chunk.reserve(chunks.size());
  std::size_t joined = 0;  // the chunks' tokens so far, compared with the text's as they come
  bool same = true;
  for (const std::string& c : chunks) {
    per_chunk.push_back(tok.tokenize(c));
    for (const std::string& t : per_chunk.back()) same = same && joined < all_tokens.size() && all_tokens[joined++] == t;
  }
  if (!same || joined != all_tokens.size()) {
    chunks = all_tokens;
    per_chunk.clear();
    for (std::string& t : all_tokens) per_chunk.push_back({std::move(t)});
  }
  return {std::move(chunks), std::move(per_chunk)};
}

/// Appends each word of `text` to e.words with its tokens, its status and the attention of its
/// kept tokens (read at `span`).
void append_words(TextExplanation& e, const text::Tokenizer& tok, const std::string& text, const IdSpan& span) {
  const auto num_words = tok.options().num_words.value_or(0);
  auto [chunks, per_chunk] = words_and_tokens(tok, text);
  e.words.reserve(e.words.size() + chunks.size());
  const std::size_t all = span.all;
  std::size_t next_id = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    WordWeight w;
    w.word = std::move(chunks[i]);
    w.tokens = std::move(per_chunk[i]);
    std::optional<WordStatus> word_status;  // (none yet)
    if (w.tokens.empty()) {
      word_status = WordStatus::kFiltered;
      w.reason = "only filtered characters";
    }
    for (const std::string& t : w.tokens) {
      const auto index = tok.word_index(t);
      const bool in_range = index && (num_words == 0 || *index < num_words);
      WordStatus status = in_range                  ? WordStatus::kKept
                          : span.subwords           ? WordStatus::kSubwords
                          : tok.options().oov_token ? WordStatus::kOov
                                                    : WordStatus::kDropped;
      if (status != WordStatus::kDropped) {
        if (next_id >= all) throw std::logic_error("explain: tokens and ids do not line up");
        if (next_id < span.cut_front || next_id >= all - span.cut_back) {
          status = WordStatus::kDropped;
          w.reason = span.cut_reason;
        } else {
          const std::size_t at = span.offset + next_id - span.cut_front;
          if (w.count == 0) w.first = at;
          ++w.count;
          w.weight += e.attention[at];
        }
        ++next_id;
      } else {
        w.reason = index ? "beyond num_words" : "unknown word";
      }
      // A word is kept if any of its tokens is; otherwise it takes its tokens' status.
      if (!word_status || status == WordStatus::kKept || (status != WordStatus::kDropped && word_status == WordStatus::kDropped))
        word_status = status;
    }
    w.status = word_status.value_or(WordStatus::kDropped);
    if (w.status != WordStatus::kDropped && w.status != WordStatus::kFiltered) w.reason.clear();
    e.words.push_back(std::move(w));
  }
  if (next_id != all) throw std::logic_error("explain: tokens and ids do not line up");
}

/// A single-level model's words: `all` is the text's token count before the maxlen cut.
void align_single(TextExplanation& e, const text::Tokenizer& tok, const TokenLayout& layout, const std::string& text, std::size_t all) {
  const auto maxlen = static_cast<std::size_t>(layout.maxlen);
  IdSpan span{all, 0, 0, 0, "beyond maxlen " + std::to_string(maxlen) + " (truncated as in training)", layout.subwords};
  if (maxlen > 0 && all > maxlen) (layout.truncating == text::Side::kPre ? span.cut_front : span.cut_back) = all - maxlen;
  append_words(e, tok, text, span);
}

/// Fills e's sentences and words for a hierarchical model: each sentence of `text` with its weight
/// and status, its words with theirs (words beyond max_words and sentences beyond max_sentences
/// listed as cut).
void align_sentences(TextExplanation& e, const text::Tokenizer& tok, const text::SentenceLayout& layout, const std::string& text) {
  std::size_t offset = 0;  // the sentence's first entry of e.ids
  for (const text::DocumentSentence& s : text::read_document(tok, text, layout)) {
    SentenceWeight sw;
    sw.text = text.substr(s.begin, s.end - s.begin);
    while (!sw.text.empty() && std::isspace(static_cast<unsigned char>(sw.text.back()))) sw.text.pop_back();
    sw.first_word = e.words.size();
    const std::size_t kept = s.index < 0 ? 0 : std::min<std::size_t>(s.ids.size(), static_cast<std::size_t>(layout.max_words));
    IdSpan span{s.ids.size(), 0, s.ids.size() - kept, offset,
                s.index < 0 ? "beyond max_sentences " + std::to_string(layout.max_sentences) + " (cut as in training)"
                            : "beyond max_words " + std::to_string(layout.max_words) + " (cut as in training)"};
    append_words(e, tok, text.substr(s.begin, s.end - s.begin), span);
    sw.words = e.words.size() - sw.first_word;
    if (s.empty()) {
      sw.status = SentenceStatus::kEmpty;
      sw.reason = "no word the tokenizer keeps";
    } else if (s.index < 0) {
      sw.status = SentenceStatus::kDropped;
      sw.reason = "beyond max_sentences " + std::to_string(layout.max_sentences);
    } else {
      sw.status = SentenceStatus::kRead;
      if (offset >= e.sentence_attention.size()) throw std::logic_error("explain: sentences and ids do not line up");
      sw.weight = e.sentence_attention[offset];
    }
    e.sentences.push_back(std::move(sw));
    offset += kept;
  }
  if (offset != e.ids.size()) throw std::logic_error("explain: sentences and ids do not line up");
}

}  // namespace

void align_words(TextExplanation& e, const text::Tokenizer& tok, const TokenLayout& layout, const std::string& text, std::size_t all) {
  e.text = text;
  if (layout.sentences.enabled())
    align_sentences(e, tok, layout.sentences, text);
  else
    align_single(e, tok, layout, text, all);
}

std::vector<WordWeight> words_of(const text::Tokenizer& tok, const TokenLayout& layout, const std::string& text, std::size_t read,
                                 std::size_t all) {
  TextExplanation e;
  e.ids.assign(read, 0);
  e.attention.assign(read, 0.0f);
  if (layout.sentences.enabled()) e.sentence_attention.assign(read, 0.0f);
  align_words(e, tok, layout, text, all);
  return std::move(e.words);
}

}  // namespace attn::report
