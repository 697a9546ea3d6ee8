#include <catch2/catch.hpp>

#include "attn/text/tokenizer.h"

using attn::text::Sequence;
using attn::text::Tokenizer;
using attn::text::TokenizerOptions;
using Words = std::vector<std::string>;

namespace {
Tokenizer make(TokenizerOptions o = {}) { return Tokenizer(std::move(o)); }
}  // namespace

TEST_CASE("word splitting follows text_to_word_sequence", "[tokenizer]") {
  const Tokenizer t = make();
  CHECK(t.tokenize("Hello\r\nWorld") == Words{"hello\r", "world"});
  CHECK(t.tokenize("a.\r\n\r\nb") == Words{"a", "\r", "\r", "b"});
  CHECK(t.tokenize("\r\n") == Words{"\r"});
  CHECK(t.tokenize("ΣΑΣ.Σ") == Words{"σασ", "ς"});
  CHECK(t.tokenize("!!! ... -- ~~~~ '' —") == Words{"''", "—"});
  CHECK(t.tokenize("don't 'quoted' rock'n'roll don’t") == Words{"don't", "'quoted'", "rock'n'roll", "don’t"});
  CHECK(t.tokenize("3.14 1,000 -17 $100 42nd 007") == Words{"3", "14", "1", "000", "17", "100", "42nd", "007"});
  CHECK(t.tokenize("https://www.example.com/a?q=1") == Words{"https", "www", "example", "com", "a", "q", "1"});
  CHECK(t.tokenize("😀😀 hi🙂there 中文") == Words{"😀😀", "hi🙂there", "中文"});
  CHECK(t.tokenize("nb\u00A0sp em\u2003sp") == Words{"nb\u00A0sp", "em\u2003sp"});
  CHECK(t.tokenize("   ").empty());
  CHECK(t.tokenize("").empty());
}

TEST_CASE("split is the only separator, filters become the split string", "[tokenizer]") {
  TokenizerOptions o;
  o.split = "stop";
  o.lower = false;
  CHECK(make(o).tokenize("onestoptwo three,four") == Words{"one", "two three", "four"});
  o = {};
  o.split = "|";
  o.filters = "—é";
  CHECK(make(o).tokenize("a b|c—dée") == Words{"a b", "c", "d", "e"});
}

TEST_CASE("char_level tokens are code points after lower, unfiltered", "[tokenizer]") {
  TokenizerOptions o;
  o.char_level = true;
  CHECK(make(o).tokenize("İ a!\n") == Words{"i", "\xCC\x87", " ", "a", "!", "\n"});
}

TEST_CASE("fitting: counts, first-seen tie order, index, num_words cut", "[tokenizer]") {
  TokenizerOptions o;
  o.num_words = 3;  // indices 1 and 2 only
  Tokenizer t = make(o);
  t.fit_on_texts({"b a c", "a c d", "c"});
  // counts: b1 a2 c3 d1 -> sorted (stable): c a b d
  CHECK(t.word_index("c") == 1);
  CHECK(t.word_index("a") == 2);
  CHECK(t.word_index("b") == 3);
  CHECK(t.word_index("d") == 4);
  CHECK(t.word_count("c") == 3);
  CHECK(t.word_docs("a") == 2);
  CHECK(t.document_count() == 3);
  CHECK(t.texts_to_sequences({"a b c d e"}) == std::vector<Sequence>{{2, 1}});
  // sequences_to_texts drops indices >= num_words and unknown ones (0 included) without an oov_token
  CHECK(t.sequences_to_texts({{0, 1, 2, 3, 99}}) == Words{"c a"});
}

TEST_CASE("oov_token takes index 1 and counts against num_words", "[tokenizer]") {
  TokenizerOptions o;
  o.num_words = 3;
  o.oov_token = "<OOV>";
  Tokenizer t = make(o);
  t.fit_on_texts({"x y y z z z"});
  CHECK(t.word_index("<OOV>") == 1);
  CHECK(t.word_index("z") == 2);
  CHECK(t.word_index("y") == 3);
  CHECK(t.texts_to_sequences({"z y x unknown"}) == std::vector<Sequence>{{2, 1, 1, 1}});
  CHECK(t.sequences_to_texts({{0, 2, 99}}) == Words{"<OOV> z <OOV>"});
}

TEST_CASE("num_words 0 or unset means no limit", "[tokenizer]") {
  for (std::optional<std::int64_t> n : {std::optional<std::int64_t>{}, std::optional<std::int64_t>{0}}) {
    TokenizerOptions o;
    o.num_words = n;
    Tokenizer t = make(o);
    t.fit_on_texts({"a b c d e f"});
    CHECK(t.texts_to_sequences({"f e"}) == std::vector<Sequence>{{6, 5}});
  }
}

TEST_CASE("oov_token colliding with a real word: later index wins, index 1 unused", "[tokenizer]") {
  TokenizerOptions o;
  o.oov_token = "oov";
  Tokenizer t = make(o);
  t.fit_on_texts({"a a oov"});
  CHECK(t.word_index("a") == 2);
  CHECK(t.word_index("oov") == 3);
  CHECK_FALSE(t.index_word(1));
  CHECK(t.texts_to_sequences({"a zzz"}) == std::vector<Sequence>{{2, 3}});
  CHECK(t.to_json().find("\"word_index\": \"{\\\"oov\\\": 3, \\\"a\\\": 2}\"") != std::string::npos);
}

TEST_CASE("fitting is cumulative across calls", "[tokenizer]") {
  Tokenizer t = make();
  t.fit_on_texts({"a b"});
  t.fit_on_texts({"b c", ""});
  CHECK(t.document_count() == 3);
  CHECK(t.word_index("b") == 1);  // count 2
  CHECK(t.word_index("a") == 2);  // first seen before c
  CHECK(t.word_index("c") == 3);
}

TEST_CASE("to_json is Keras' exact format", "[tokenizer][json]") {
  TokenizerOptions o;
  o.num_words = 10;
  Tokenizer t = make(o);
  t.fit_on_texts({"Héllo\r wörld 😀", "héllo"});
  const std::string expected =
      R"({"class_name": "Tokenizer", "config": {"num_words": 10, "filters": "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n", )"
      R"("lower": true, "split": " ", "char_level": false, "oov_token": null, "document_count": 2, )"
      R"("word_counts": "{\"h\\u00e9llo\\r\": 1, \"w\\u00f6rld\": 1, \"\\ud83d\\ude00\": 1, \"h\\u00e9llo\": 1}", )"
      R"("word_docs": "{\"h\\u00e9llo\\r\": 1, \"w\\u00f6rld\": 1, \"\\ud83d\\ude00\": 1, \"h\\u00e9llo\": 1}", )"
      R"("index_docs": "{\"1\": 1, \"2\": 1, \"3\": 1, \"4\": 1}", )"
      R"("index_word": "{\"1\": \"h\\u00e9llo\\r\", \"2\": \"w\\u00f6rld\", \"3\": \"\\ud83d\\ude00\", \"4\": \"h\\u00e9llo\"}", )"
      R"("word_index": "{\"h\\u00e9llo\\r\": 1, \"w\\u00f6rld\": 2, \"\\ud83d\\ude00\": 3, \"h\\u00e9llo\": 4}"}})";
  CHECK(t.to_json() == expected);
}

TEST_CASE("to_json escapes quotes and backslashes in words twice, as json.dumps(json.dumps(...)) does", "[tokenizer][json]") {
  TokenizerOptions o;
  o.filters = "";  // keeps '"' and '\\' in words
  Tokenizer t = make(o);
  t.fit_on_texts({"a\"b\\c x \\u00e9 tab\tend"});
  const std::string j = t.to_json();
  // Keras: json.dumps({'a"b\\c': 1, ...}) gives {"a\"b\\c": 1, ...}; that string dumped again:
  CHECK(j.find(R"("word_counts": "{\"a\\\"b\\\\c\": 1, \"x\": 1, \"\\\\u00e9\": 1, \"tab\\tend\": 1}")") != std::string::npos);
  CHECK(j.find(R"("index_word": "{\"1\": \"a\\\"b\\\\c\", \"2\": \"x\", \"3\": \"\\\\u00e9\", \"4\": \"tab\\tend\"}")") !=
        std::string::npos);
  CHECK(Tokenizer::from_json(j).to_json() == j);
}

TEST_CASE("from_json round-trips and rejects bad files naming the key", "[tokenizer][json]") {
  TokenizerOptions o;
  o.num_words = 4;
  o.oov_token = "<OOV>";
  Tokenizer t = make(o);
  t.fit_on_texts({"the cat sat on the mat", "the dog 😀 ate\r"});
  const Tokenizer u = Tokenizer::from_json(t.to_json(), "tok.json");
  CHECK(u.to_json() == t.to_json());
  const std::vector<std::string> texts{"the cat ate a 😀", "mat dog"};
  CHECK(u.texts_to_sequences(texts) == t.texts_to_sequences(texts));

  CHECK_THROWS_WITH(Tokenizer::from_json("{", "tok.json"), Catch::Contains("tok.json: not valid JSON"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"class_name": "Tokenizer"})", "tok.json"), Catch::Contains("tok.json: config: missing"));
  std::string j = t.to_json();
  j.replace(j.find("\"lower\": true"), 13, "\"lower\": 1");
  CHECK_THROWS_WITH(Tokenizer::from_json(j, "tok.json"), Catch::Contains("tok.json: config.lower: expected true or false"));
  j = t.to_json();
  j.replace(j.find("\"word_index\": \""), 15, "\"word_index\": \"[");
  CHECK_THROWS_WITH(Tokenizer::from_json(j, "tok.json"), Catch::Contains("tok.json: config.word_index"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"class_name": "Sequential", "config": {}})", "m.json"), Catch::Contains("m.json: class_name"));
}

TEST_CASE("an empty split is rejected", "[tokenizer]") {
  TokenizerOptions o;
  o.split = "";
  CHECK_THROWS_AS(Tokenizer(o), std::invalid_argument);
}

TEST_CASE("a 200k-word tokenizer.json round-trips (Jigsaw-sized vocabulary)", "[tokenizer][json]") {
  std::vector<std::string> texts;
  std::string text;
  for (int i = 0; i < 200000; ++i) {
    text += "w" + std::to_string(i) + (i % 7 ? " " : " é ");
    if (i % 50 == 49) {
      texts.push_back(text);
      text.clear();
    }
  }
  TokenizerOptions o;
  o.num_words = 20000;
  Tokenizer t(o);
  t.fit_on_texts(texts, 2);
  REQUIRE(t.vocabulary_size() == 200001);
  const std::string json = t.to_json();
  const Tokenizer u = Tokenizer::from_json(json);
  CHECK(u.to_json() == json);
  CHECK(u.texts_to_sequences({texts[10]}) == t.texts_to_sequences({texts[10]}));
}
