// Documents as sentences of words (text/sentences.h): ICU's boundaries, the ids that carry their
// sentence, the cuts, and the layout a corpus suggests.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/text/sentences.h"

using namespace attn::text;

namespace {

std::vector<std::string> sentences_of(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [b, e] : sentence_spans(text)) out.push_back(text.substr(b, e - b));
  return out;
}

Tokenizer fitted(const std::vector<std::string>& texts) {
  Tokenizer t;
  t.fit_on_texts(texts);
  return t;
}

}  // namespace

TEST_CASE("sentence_spans: ICU's sentences cover the text, line breaks end a sentence, blank lines join the one before", "[sentences]") {
  // UAX #29: a period followed by a lower-case word is not a sentence end ("e.g. this"); ? ! and line breaks are.
  CHECK(sentences_of("you are wrong. see the page? yes") == std::vector<std::string>{"you are wrong. see the page? ", "yes"});
  CHECK(sentences_of("Hello there. How are you? Fine!") == std::vector<std::string>{"Hello there. ", "How are you? ", "Fine!"});
  CHECK(sentences_of("Hi Anna,\nThe page is fine.\n\nThanks,\nTom") ==
        std::vector<std::string>{"Hi Anna,\n", "The page is fine.\n\n", "Thanks,\n", "Tom"});
  CHECK(sentences_of("no terminator at all") == std::vector<std::string>{"no terminator at all"});
  CHECK(sentences_of("").empty());
  // Byte offsets over UTF-8, not UTF-16 units: the spans cover every byte once.
  const std::string text = "Ünïcödé wörds hère. 東京は大きい。 Ça va?";
  std::size_t covered = 0;
  for (const auto& [b, e] : sentence_spans(text)) {
    CHECK(b == covered);
    covered = e;
  }
  CHECK(covered == text.size());
  CHECK(sentence_spans(text).size() == 3);
}

TEST_CASE("ids carry their sentence: word + 2^20 x sentence, and back", "[sentences]") {
  CHECK(encode_word(7, 0) == 7);
  CHECK(encode_word(7, 3) == 7 + 3 * (1 << 20));
  CHECK(word_of(encode_word(19999, 2046)) == 19999);
  CHECK(sentence_of(encode_word(19999, 2046)) == 2046);
  CHECK(encode_word(1, kSentenceLimit) > 0);  // the last sentence still fits 32-bit ids
}

TEST_CASE("encode_document: sentences keeping no word are skipped and not counted, max_sentences and max_words cut", "[sentences]") {
  const Tokenizer tok = fitted({"a b c d e f g"});
  const std::string doc = "A b c.\n!!!\nD e f g. A. B c.";
  const SentenceLayout all{10, 10};
  const auto read = read_document(tok, doc, all);
  REQUIRE(read.size() == 5);
  CHECK(read[1].empty());
  CHECK(read[1].index == -1);  // "!!!" keeps no word: not a sentence the model reads
  CHECK(read[2].index == 1);
  const Sequence a = tok.texts_to_sequences({"a"})[0], b = tok.texts_to_sequences({"b"})[0], c = tok.texts_to_sequences({"c"})[0];
  CHECK(encode_document(read, all)[0] == a[0]);
  CHECK(encode_document(read, all).size() == 3 + 4 + 1 + 2);
  const Sequence cut = encode_document(read_document(tok, doc, {2, 2}), {2, 2});
  const Sequence d = tok.texts_to_sequences({"d"})[0], e = tok.texts_to_sequences({"e"})[0];
  CHECK(cut == Sequence{a[0], b[0], encode_word(d[0], 1), encode_word(e[0], 1)});
  CHECK(encode_documents(tok, {doc, "", "!!!"}, {2, 2}) == std::vector<Sequence>{cut, {}, {}});
  CHECK_THROWS_AS(encode_documents(tok, {doc}, {}), std::invalid_argument);
}

TEST_CASE("layout_from: the 95th percentiles of sentences per document and words per sentence, capped", "[sentences]") {
  const Tokenizer tok = fitted({"a b c d"});
  std::vector<std::string> texts;
  for (int i = 0; i < 20; ++i) texts.push_back(i < 19 ? "A b. C." : "A b c d. A. B. C. D. A.");
  const SentenceStats stats = sentence_stats(tok, texts);
  CHECK(stats.sentences_per_document.size() == 20);
  CHECK(stats.words_per_sentence.size() == 19 * 2 + 6);
  const SentenceLayout l = layout_from(stats);
  CHECK(l.max_sentences == 3);  // numpy.percentile([2]*19 + [6], 95) = 2.2, rounded up
  CHECK(l.max_words == 2);
  CHECK(layout_from(stats, {1, 1}).max_sentences == 1);
  CHECK(layout_from(SentenceStats{}).max_words == 1);  // an empty corpus still reads something
}

TEST_CASE("SentenceLayout JSON round-trips and refuses inconsistent sizes", "[sentences]") {
  const nlohmann::json j = SentenceLayout{12, 30};
  CHECK(j == nlohmann::json{{"max_sentences", 12}, {"max_words", 30}});
  CHECK(j.get<SentenceLayout>().max_words == 30);
  CHECK_FALSE(nlohmann::json{{"max_sentences", 0}, {"max_words", 0}}.get<SentenceLayout>().enabled());
  CHECK_THROWS_AS((nlohmann::json{{"max_sentences", 3}, {"max_words", 0}}.get<SentenceLayout>()), std::invalid_argument);
  CHECK_THROWS_AS((nlohmann::json{{"max_sentences", kSentenceLimit + 1}, {"max_words", 5}}.get<SentenceLayout>()), std::invalid_argument);
}
