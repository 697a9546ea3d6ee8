#pragma once
/// Word alignment: how the words of a text, as written, line up with the ids a text model read.
/// A word is a chunk of the text between spaces, tabs and newlines; its tokens are what the
/// (Keras) tokenizer makes of it. Each word gets a status (kept, oov, subwords, dropped, filtered),
/// the reason when it was not read, and the entries of the explanation's ids holding its kept
/// tokens, whose attention it sums. Torch-free: explain, plausibility's rationales and anything
/// that maps tokens back to the text use it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/report/explanation.h"
#include "attn/text/padding.h"
#include "attn/text/sentences.h"
#include "attn/text/tokenizer.h"

namespace attn::report {

/// How a text model cuts a text's tokens (its data config's parts that alignment needs).
struct TokenLayout {
  std::int64_t maxlen = 0;                   ///< tokens read at most (0: all); single-level models
  text::Side truncating = text::Side::kPre;  ///< which end a longer text loses (Keras' 'pre': its start)
  bool subwords = false;                     ///< every token has an id (a model with subwords)
  text::SentenceLayout sentences;            ///< enabled(): a hierarchical model's sentences and words
};

/// Fills e.words (and, for a hierarchical layout, e.sentences) for `text`, whose ids the model read
/// are e.ids, with their attention in e.attention (and e.sentence_attention). `all`: the text's
/// token count before the maxlen cut (a hierarchical layout cuts by its own rules). Sets e.text.
/// Throws std::logic_error if the tokens and the ids do not line up.
void align_words(TextExplanation& e, const text::Tokenizer& tok, const TokenLayout& layout, const std::string& text, std::size_t all);

/// Each word of `text` as align_words aligns it, without attention: `read` ids read, `all` tokens
/// before the cut.
std::vector<WordWeight> words_of(const text::Tokenizer& tok, const TokenLayout& layout, const std::string& text, std::size_t read,
                                 std::size_t all);

}  // namespace attn::report
