// Reading Keras' tokenizer.json (tokenizer_json.cpp): any valid JSON layout, strict refusals naming
// the key, and the load that reads only what applying the tokenizer needs.
#include <catch2/catch.hpp>

#include "attn/text/tokenizer.h"

using attn::text::Sequence;
using attn::text::Tokenizer;
using attn::text::TokenizerOptions;

TEST_CASE("from_json reads any valid JSON layout and refuses invalid JSON", "[tokenizer][json]") {
  Tokenizer t;
  t.fit_on_texts({"héllo wörld 😀", "héllo"});
  const std::string json = t.to_json();
  // Whitespace anywhere, escapes Keras never writes (\/, raw UTF-8, upper-case hex), an unknown key
  // holding nested values, and a repeated key (the last one counts, as in Python) all read the same.
  std::string spaced = json;
  spaced.replace(spaced.find("{\"class_name\""), 1, " \n{ \"extra\" : [1, {\"a\": [true, null, -2.5e3]}],\r\n\t");
  spaced.replace(spaced.find("\"lower\": true"), 13, "\"lower\": false, \"lower\" :\ttrue");
  spaced += " \n";
  CHECK(Tokenizer::from_json(spaced).to_json() == json);
  std::string escaped = json;
  escaped.replace(escaped.find("\"class_name\": \"Tokenizer\""), 25, "\"class_name\": \"Tok\\u0065nizer\"");
  CHECK(Tokenizer::from_json(escaped).to_json() == json);

  const auto error = [](const std::string& j) {
    try {
      Tokenizer::from_json(j, "t.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Contains;
  CHECK_THAT(error(json + "x"), Contains("t.json: not valid JSON: trailing characters"));
  CHECK_THAT(error("{\"config\": {\"a\": \"\x80\"}}"), Contains("t.json: not valid JSON: invalid UTF-8"));
  CHECK_THAT(error("{\"config\": {\"a\": \"\\ud800\"}}"), Contains("not valid JSON: high surrogate without its low surrogate"));
  CHECK_THAT(error("{\"config\": {\"a\": \"\\udc00\"}}"), Contains("not valid JSON: lone low surrogate"));
  CHECK_THAT(error("{\"config\": {\"a\": \"\\x\"}}"), Contains("not valid JSON: bad escape"));
  CHECK_THAT(error("{\"config\": {\"a\": \"tab\there\"}}"), Contains("not valid JSON: control character"));
  CHECK_THAT(error("{\"config\": {\"a\": 01}}"), Contains("not valid JSON"));
  CHECK_THAT(error("{\"config\": {\"a\": [1,]}}"), Contains("not valid JSON"));
  CHECK_THAT(error("{\"config\": {\"a\": 1,}}"), Contains("not valid JSON: expected a key"));
  CHECK_THAT(error(std::string(1000, '[') + std::string(1000, ']')), Contains("not valid JSON: nested too deeply"));
  CHECK_THAT(error("[1, 2]"), Contains("t.json: (top level): expected an object"));
  CHECK_THAT(error("{\"config\": 3}"), Contains("t.json: config: expected an object"));
  std::string j = json;
  j.replace(j.find("\"num_words\": null"), 17, "\"num_words\": 2e4");
  CHECK_THAT(error(j), Contains("t.json: config.num_words: expected an integer, got 2e4"));
  j = json;
  j.replace(j.find("\"word_index\": \"{"), 16, "\"word_index\": \"{\\\"a\\\": 1.5, ");
  CHECK_THAT(error(j), Contains("t.json: config.word_index['a']: expected an integer, got 1.5"));
  j = json;
  j.replace(j.find("\"word_counts\": \"{"), 17, "\"word_counts\": \"{\\\"a\\\": {}, ");
  CHECK_THAT(error(j), Contains("t.json: config.word_counts: not a JSON object of words: expected a flat object"));
}

TEST_CASE("words with escapes, control characters and UTF-8 at every offset read back exactly", "[tokenizer][json]") {
  // The scanner copies plain runs eight bytes at a time: put each kind of byte at every offset of
  // such a block, in word_index (decoded) and in the tables a transform-only load skips.
  TokenizerOptions o;
  o.filters = "";
  o.split = " ";
  std::vector<std::string> texts;
  for (const std::string special : {"\"", "\\", "\t", "\x01", "\x7f", "é", "😀", "/"})
    for (std::size_t n = 0; n < 20; ++n)
      texts.push_back(std::string(n, 'a') + special + std::string(19 - n, 'b') + " w" + std::to_string(n));
  Tokenizer t(o);
  t.fit_on_texts(texts);
  const std::string json = t.to_json();
  CHECK(Tokenizer::from_json(json).to_json() == json);
  const Tokenizer u = Tokenizer::from_json(json, "t.json", attn::text::TokenizerTables::kForTransform);
  CHECK(u.texts_to_sequences(texts) == t.texts_to_sequences(texts));
  CHECK(u.vocabulary_size() == t.vocabulary_size());
}

TEST_CASE("a table a transform-only load skips is still checked as a JSON string", "[tokenizer][json]") {
  Tokenizer t;
  t.fit_on_texts({"the cat sat on the mat"});
  const std::string json = t.to_json();
  const auto error = [](const std::string& j) {
    try {
      Tokenizer::from_json(j, "t.json", attn::text::TokenizerTables::kForTransform);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Contains;
  for (std::size_t n = 0; n < 17; ++n) {  // the bad byte at every offset of an eight-byte block
    INFO("after " << n << " plain bytes");
    const std::string plain(n, 'x');
    const auto with = [&](const std::string& bad) {
      std::string j = json;
      j.replace(j.find("\"word_counts\": \"{"), 17, "\"word_counts\": \"" + plain + bad + "{");
      return j;
    };
    CHECK_THAT(error(with("\x01")), Contains("t.json: not valid JSON: control character"));
    CHECK_THAT(error(with("\xff")), Contains("t.json: not valid JSON: invalid UTF-8"));
    CHECK_THAT(error(with("\\q")), Contains("t.json: not valid JSON: bad escape"));
    CHECK_THAT(error(with("\\u12")), Contains("t.json: not valid JSON: bad hex digit"));
    CHECK(error(with("\\\"\\\\\\/")) == "no error");
  }
}

TEST_CASE("a tokenizer loaded only to apply it applies it exactly as the full one", "[tokenizer][json]") {
  const std::vector<std::string> texts{"the cat sat on the mat oov", "the dog ate the oov cat", "a b c d e f g h"};
  const std::vector<std::string> probe{"the cat ate a 😀 mat", "dog oov zzz h", ""};
  for (const char* oov : {"", "<OOV>", "oov"}) {  // none, the usual one, one that is also a counted word
    for (const std::int64_t num_words : {0, 4, 1000}) {
      TokenizerOptions o;
      if (num_words) o.num_words = num_words;
      if (*oov) o.oov_token = std::string(oov);
      Tokenizer t(o);
      t.fit_on_texts(texts);
      const std::string json = t.to_json();
      const Tokenizer u = Tokenizer::from_json(json, "t.json", attn::text::TokenizerTables::kForTransform);
      INFO("oov '" << oov << "', num_words " << num_words);
      CHECK(u.texts_to_sequences(probe) == t.texts_to_sequences(probe));
      CHECK(u.vocabulary_size() == t.vocabulary_size());
      CHECK(u.document_count() == t.document_count());
      for (const std::string w : {"the", "oov", "<OOV>", "h", "zzz"}) CHECK(u.word_index(w) == t.word_index(w));
      for (std::int32_t i = 0; i < 20; ++i) CHECK(u.index_word(i) == t.index_word(i));
      const std::vector<Sequence> seqs{{1, 2, 3, 4, 5, 6, 7, 8, 9, 99}};
      CHECK(u.sequences_to_texts(seqs) == t.sequences_to_texts(seqs));
      CHECK_THROWS_AS(u.to_json(), std::logic_error);
      CHECK_THROWS_AS(u.word_count("the"), std::logic_error);
      // Only word_index is read: the other tables are not even parsed.
      std::string broken = json;
      broken.replace(broken.find("\"word_counts\": \"{"), 17, "\"word_counts\": \"{oops");
      CHECK_NOTHROW(Tokenizer::from_json(broken, "t.json", attn::text::TokenizerTables::kForTransform));
      CHECK_THROWS(Tokenizer::from_json(broken, "t.json"));
    }
  }
}
