// Word alignment (report/word_alignment.h): a text's words as written against the ids a model read,
// without a model: statuses, reasons, the cut ends, attention summed per word, sentences.
#include <catch2/catch.hpp>

#include "attn/report/word_alignment.h"

using namespace attn;

namespace {
text::Tokenizer fitted(text::TokenizerOptions o = {}) {
  text::Tokenizer t(std::move(o));
  t.fit_on_texts({"the cat sat on the mat", "the cat", "a dog. the end"});
  return t;
}

const report::WordWeight& word(const std::vector<report::WordWeight>& words, const std::string& w) {
  for (const auto& x : words)
    if (x.word == w) return x;
  FAIL("no word " << w);
  throw std::logic_error("unreachable");
}
}  // namespace

TEST_CASE("word alignment: each word's status, reason and the ids holding its tokens", "[report][alignment]") {
  const text::Tokenizer tok = fitted();
  report::TokenLayout layout;
  const auto words = report::words_of(tok, layout, "The cat, zebra !!! sat", 3, 3);
  REQUIRE(words.size() == 5);
  CHECK(words[0].word == "The");
  CHECK(words[0].tokens == std::vector<std::string>{"the"});
  CHECK(words[0].first == 0);
  CHECK(words[0].count == 1);
  CHECK(word(words, "cat,").first == 1);
  CHECK(word(words, "zebra").status == report::WordStatus::kDropped);
  CHECK(word(words, "zebra").reason == "unknown word");
  CHECK(word(words, "zebra").count == 0);
  CHECK(word(words, "!!!").status == report::WordStatus::kFiltered);
  CHECK(word(words, "sat").first == 2);
  // A tokenizer with an OOV token reads the unknown word: it holds an id.
  text::TokenizerOptions oov;
  oov.oov_token = "<OOV>";
  const auto with_oov = report::words_of(fitted(oov), layout, "the zebra", 2, 2);
  CHECK(word(with_oov, "zebra").status == report::WordStatus::kOov);
  CHECK(word(with_oov, "zebra").first == 1);
}

TEST_CASE("word alignment: the maxlen cut at either end, and attention summed over a word's tokens", "[report][alignment]") {
  const text::Tokenizer tok = fitted();
  report::TokenLayout layout;
  layout.maxlen = 2;
  report::TextExplanation e;
  e.ids = {5, 6};
  e.attention = {0.25f, 0.75f};
  report::align_words(e, tok, layout, "the cat sat", 3);  // truncating 'pre': the first word is cut
  CHECK(e.text == "the cat sat");
  CHECK(e.words[0].status == report::WordStatus::kDropped);
  CHECK(e.words[0].reason == "beyond maxlen 2 (truncated as in training)");
  CHECK(e.words[1].weight == Approx(0.25));
  CHECK(e.words[2].weight == Approx(0.75));
  layout.truncating = text::Side::kPost;
  e.words.clear();
  report::align_words(e, tok, layout, "the cat sat", 3);
  CHECK(e.words[0].weight == Approx(0.25));
  CHECK(e.words[2].status == report::WordStatus::kDropped);
  // "cat-cat" is one word of two tokens: its weight is both entries'.
  report::TextExplanation two;
  two.ids = {2, 2};
  two.attention = {0.5f, 0.25f};
  report::align_words(two, tok, report::TokenLayout{}, "cat-cat", 2);
  REQUIRE(two.words.size() == 1);
  CHECK(two.words[0].count == 2);
  CHECK(two.words[0].weight == Approx(0.75));
}

TEST_CASE("word alignment: ids that do not match the text's tokens are a logic error, not a guess", "[report][alignment]") {
  const text::Tokenizer tok = fitted();
  CHECK_THROWS_AS(report::words_of(tok, report::TokenLayout{}, "the cat sat", 2, 2), std::logic_error);
}

TEST_CASE("word alignment: a hierarchical layout's sentences, the words and sentences beyond it", "[report][alignment]") {
  const text::Tokenizer tok = fitted();
  report::TokenLayout layout;
  layout.sentences = {1, 2};  // one sentence of two words
  report::TextExplanation e;
  e.ids = {1, 2};
  e.attention = {0.5f, 0.5f};
  e.sentence_attention = {1.0f, 1.0f};
  report::align_words(e, tok, layout, "The cat sat. The end.", 0);
  REQUIRE(e.sentences.size() == 2);
  CHECK(e.sentences[0].text == "The cat sat.");
  CHECK(e.sentences[0].status == report::SentenceStatus::kRead);
  CHECK(e.sentences[0].weight == Approx(1.0));
  CHECK(e.sentences[1].status == report::SentenceStatus::kDropped);
  CHECK(e.words[2].status == report::WordStatus::kDropped);
  CHECK_THAT(e.words[2].reason, Catch::Contains("beyond max_words 2"));
  CHECK_THAT(e.words[3].reason, Catch::Contains("beyond max_sentences 1"));
}
