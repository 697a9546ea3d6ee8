// fastText's hash and n-grams, and a model's words with their subwords (text/subwords.h).
#include <algorithm>

#include <catch2/catch.hpp>

#include "attn/text/subwords.h"

using namespace attn;

TEST_CASE("fasttext_hash: FNV-1a over the bytes, bytes from 0x80 sign-extended as fastText's int8_t cast", "[text][subwords]") {
  // FNV-1a's published 32-bit vectors hold for ASCII
  CHECK(text::fasttext_hash("") == 0x811c9dc5u);
  CHECK(text::fasttext_hash("a") == 0xe40c292cu);
  CHECK(text::fasttext_hash("foobar") == 0xbf9cf968u);
  // "é" is C3 A9: XORed as FFFFFFC3 and FFFFFFA9 (plain FNV-1a gives 0x1e9de8c1)
  CHECK(text::fasttext_hash("\xc3\xa9") == 0x3cfa68c1u);
}

TEST_CASE("subword_rows: the n-grams of <word>, n = 3..6 characters, by start then length, as 1 + hash % buckets", "[text][subwords]") {
  const std::int64_t B = 1000003;
  const auto row = [&](const char* ngram) { return static_cast<std::int32_t>(1 + text::fasttext_hash(ngram) % B); };
  CHECK(text::subword_rows("a", B) == std::vector<std::int32_t>{row("<a>")});
  CHECK(text::subword_rows("ab", B) == std::vector<std::int32_t>{row("<ab"), row("<ab>"), row("ab>")});
  CHECK(text::subword_rows("", B) == std::vector<std::int32_t>{});  // "<>": two characters
  // "stupid": "<stupid>" is 8 characters: 4 n-grams (n = 3..6) from each of the first three starts, fewer near the end
  const std::vector<std::int32_t> s = text::subword_rows("stupid", B);
  CHECK(s.size() == 4 + 4 + 4 + 3 + 2 + 1);
  CHECK(s.front() == row("<st"));
  CHECK(s[3] == row("<stupi"));
  CHECK(s.back() == row("id>"));
  // n counts characters: "<é>" is three (four bytes), and no n-gram starts inside a character
  CHECK(text::subword_rows("\xc3\xa9", B) == std::vector<std::int32_t>{row("<\xc3\xa9>")});
  CHECK(text::subword_rows("\xc3\xa9t", B) == std::vector<std::int32_t>{row("<\xc3\xa9t"), row("<\xc3\xa9t>"), row("\xc3\xa9t>")});
  for (std::int32_t r : text::subword_rows("misspelt", 7)) CHECK((r >= 1 && r <= 7));
  CHECK_THROWS(text::subword_rows("a", 0));
}

TEST_CASE("consonant_skeleton: the ASCII vowels after the first byte dropped", "[text][subwords]") {
  CHECK(text::consonant_skeleton("stupid") == "stpd");
  CHECK(text::consonant_skeleton("idiot") == "idt");  // the first letter stays, vowel or not
  CHECK(text::consonant_skeleton("IdIOT") == "IdT");  // either case
  CHECK(text::consonant_skeleton("fck") == "fck");
  CHECK(text::consonant_skeleton("you") == "y");  // y is no vowel here
  CHECK(text::consonant_skeleton("a") == "a");
  CHECK(text::consonant_skeleton("") == "");
  CHECK(text::consonant_skeleton("caf\xc3\xa9s") == "cf\xc3\xa9s");  // a character beyond ASCII stays whole
}

TEST_CASE("has_vowel_after_first: whether consonant_skeleton would change the word", "[text][subwords]") {
  for (const char* w : {"stupid", "idiot", "IdIOT", "fck", "you", "a", "", "Stpd", "instd", "gym"})
    CHECK(text::has_vowel_after_first(w) == (text::consonant_skeleton(w) != w));
}

TEST_CASE("subword_rows with skeletons: the word's n-grams, then its skeleton's when it differs", "[text][subwords]") {
  const std::int64_t B = 1000003;
  const auto plain = [&](const char* w) { return text::subword_rows(w, B); };
  std::vector<std::int32_t> want = plain("stupid");
  const std::vector<std::int32_t> skeleton = plain("stpd");
  want.insert(want.end(), skeleton.begin(), skeleton.end());
  CHECK(text::subword_rows("stupid", B, true) == want);
  // a word written without its vowels reads exactly the rows the skeleton adds to the word
  CHECK(text::subword_rows("stpd", B, true) == skeleton);
  for (std::int32_t r : skeleton) CHECK(std::count(want.begin(), want.end(), r) >= 1);
  // nothing added when the skeleton is the word; without the flag the rows are fastText's alone
  CHECK(text::subword_rows("fck", B, true) == plain("fck"));
  CHECK(text::subword_rows("stupid", B, false) == plain("stupid"));
  text::TokenizerOptions o;
  auto tok = std::make_shared<text::Tokenizer>(o);
  tok->fit_on_texts({"you are stupid"});
  text::SubwordVocabulary v(tok, B, true);
  CHECK(v.skeletons());
  const text::Sequence ids = v.encode("stupid stpd");
  CHECK(v.rows(ids[0]) == want);
  CHECK(v.rows(ids[1]) == skeleton);
  CHECK_FALSE(text::SubwordVocabulary(tok, B).skeletons());
}

TEST_CASE("SubwordVocabulary: every token keeps its place, known words their index, new words the next ids", "[text][subwords]") {
  text::TokenizerOptions o;
  o.num_words = 3;  // emits the, cat
  auto tok = std::make_shared<text::Tokenizer>(o);
  tok->fit_on_texts({"the cat sat", "the cat", "the"});  // the 1, cat 2, sat 3
  text::SubwordVocabulary v(tok, 64);
  REQUIRE(v.first_new_id() == 4);
  const text::Sequence ids = v.encode("The sat stuuupid cat stuuupid, id1ot");
  CHECK(ids == text::Sequence{1, 3, 4, 2, 4, 5});
  CHECK(v.new_words() == 2);
  CHECK(v.word(3) == "sat");
  CHECK(v.word(4) == "stuuupid");
  CHECK(v.word(5) == "id1ot");
  CHECK(v.word(6).empty());
  // the model's word rows: below num_words the word's own; beyond it, or new, none (n-grams alone)
  CHECK(v.word_row(1) == 1);
  CHECK(v.word_row(2) == 2);
  CHECK(v.word_row(3) == 0);
  CHECK(v.word_row(5) == 0);
  CHECK(v.rows(0).empty());
  CHECK(v.rows(5) == text::subword_rows("id1ot", 64));
  // Keras' texts_to_sequences keeps only "the" and "cat" of the same text
  CHECK(tok->texts_to_sequences({"The sat stuuupid cat stuuupid, id1ot"}).front() == text::Sequence{1, 2});
}

TEST_CASE("SubwordVocabulary: with an OOV token, words without a row of their own read it", "[text][subwords]") {
  text::TokenizerOptions o;
  o.oov_token = "<unk>";
  o.num_words = 3;
  auto tok = std::make_shared<text::Tokenizer>(o);
  tok->fit_on_texts({"the cat sat", "the"});  // <unk> 1, the 2, cat 3, sat 4
  text::SubwordVocabulary v(tok, 64);
  const text::Sequence ids = v.encode("the cat zebra");
  CHECK(ids == text::Sequence{2, 3, 5});
  CHECK(v.word_row(2) == 2);
  CHECK(v.word_row(3) == 1);
  CHECK(v.word_row(5) == 1);
  CHECK_THROWS(text::SubwordVocabulary(tok, 0));
}

TEST_CASE("SubwordVocabulary: without num_words every word of the tokenizer's has its row, a new word none", "[text][subwords]") {
  auto tok = std::make_shared<text::Tokenizer>();
  tok->fit_on_texts({"the cat sat"});  // the 1, cat 2, sat 3
  text::SubwordVocabulary v(tok, 64);
  CHECK(v.encode("sat zebra") == text::Sequence{3, 4});
  CHECK(v.word_row(3) == 3);
  CHECK(v.word_row(4) == 0);  // a new id is not a row of the word table, however small
}
