// Keras' text_to_word_sequence (shared/keras_text_semantics.md, section 1): lower with Python's
// str.lower(), replace every `filters` code point by `split`, split on `split` only, drop empty
// strings. Every expected list below is what Keras returns for the same arguments.
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/text/csv.h"
#include "attn/text/word_splitter.h"

using attn::text::SplitOptions;
using attn::text::WordSplitter;
using Words = std::vector<std::string>;

namespace {
Words words(std::string_view text, SplitOptions o = {}) { return WordSplitter(std::move(o)).split(text); }

SplitOptions with_split(std::string split, bool lower = true) {
  SplitOptions o;
  o.split = std::move(split);
  o.lower = lower;
  return o;
}

SplitOptions with_filters(std::string filters) {
  SplitOptions o;
  o.filters = std::move(filters);
  return o;
}
}  // namespace

TEST_CASE("WordSplitter defaults: lowercase, Keras' filters become spaces, empty strings dropped", "[text][words]") {
  // Keras' default filters: 31 ASCII punctuation characters (all but the apostrophe), TAB and LF.
  CHECK(attn::text::kDefaultFilters.size() == 33);
  CHECK(attn::text::kDefaultFilters.find('\'') == std::string_view::npos);
  CHECK(words("Hello, World!") == Words{"hello", "world"});
  // Runs of separators, and separators at either end, give no empty tokens.
  CHECK(words("  a  ,, b  ") == Words{"a", "b"});
  // Nothing left: empty text, only filtered characters (TAB and LF are filters).
  CHECK(words("").empty());
  CHECK(words("!?.,;:").empty());
  CHECK(words("\t\n").empty());
  // The apostrophe and CR are not filters: they stay inside tokens.
  CHECK(words("It's\r\n") == Words{"it's\r"});
  // Multi-byte UTF-8 is never cut; non-ASCII punctuation is not filtered.
  CHECK(words("Café Ünïcödé 東京 😀!") == Words{"café", "ünïcödé", "東京", "😀"});
  CHECK(words("«hi» — ok…") == Words{"«hi»", "—", "ok…"});
  // No Unicode normalization: e + COMBINING ACUTE stays as it is.
  CHECK(words("e\u0301 \u00E9") == Words{"e\u0301", "\u00E9"});
  // Python's full lowercase: İ is i + U+0307; a word-final capital sigma becomes ς.
  CHECK(words("İ ΟΔΥΣΣΕΥΣ.") == Words{"i\u0307", "οδυσσευς"});
}

TEST_CASE("WordSplitter: lower=false keeps case, and split (of any length) is the only separator", "[text][words]") {
  CHECK(words("Hello World", with_split(" ", false)) == Words{"Hello", "World"});
  // Another split: spaces are then part of tokens, filters become the split string.
  CHECK(words("a b|c,d||e", with_split("|")) == Words{"a b", "c", "d", "e"});
  CHECK(words("aXYb c.d", with_split("XY", false)) == Words{"a", "b c", "d"});
  CHECK(words("a·b c!d", with_split("·")) == Words{"a", "b c", "d"});  // a multi-byte split
  CHECK(words("x--y", with_split("--")) == Words{"x", "y"});           // '-' is a filter, replaced by "--"
  CHECK(words("aaa", with_split("aa")) == Words{"a"});                 // Python's "aaa".split("aa") == ["", "a"]
}

TEST_CASE("WordSplitter: filters are code points, not bytes", "[text][words]") {
  // é (C3 A9) is filtered, ã (C3 A3, the same lead byte) is not.
  CHECK(words("café—bar ée ã", with_filters("é—")) == Words{"caf", "bar", "e", "ã"});
  CHECK(words("a😀b", with_filters("😀")) == Words{"a", "b"});
  CHECK(words("a,b c", with_filters("")) == Words{"a,b", "c"});
  // Lowercasing comes first: KELVIN SIGN lowers to ASCII k, which is then filtered.
  CHECK(words("\u212Aelvin k", with_filters("k")) == Words{"elvin"});
}

TEST_CASE("WordSplitter: char_level tokens are the code points of the lowered text, unfiltered", "[text][words]") {
  SplitOptions o;
  o.char_level = true;
  CHECK(words("Aé 😀!", o) == Words{"a", "é", " ", "😀", "!"});
  CHECK(words("", o).empty());
  o.lower = false;
  CHECK(words("AB\n", o) == Words{"A", "B", "\n"});
}

TEST_CASE("WordSplitter: the ASCII fast path and the code-point path agree on messy comments", "[text][words]") {
  // Default filters with a one-byte split take the byte-wise path; one extra non-ASCII filter (a
  // private-use character no comment holds) forces the code-point path. Both must be Keras.
  attn::text::CsvReader csv(std::string(ATTN_FIXTURES) + "/messy_comments.csv");
  const std::size_t column = csv.column("comment_text");
  std::vector<std::string> texts;
  for (attn::text::CsvRecord record; csv.next(record);) texts.push_back(record.fields[column]);
  REQUIRE(texts.size() > 20);
  for (const bool lower : {true, false}) {
    SplitOptions general;
    general.filters += "\uE000";
    general.lower = lower;
    const WordSplitter fast(with_split(" ", lower)), slow(general);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      INFO("comment " << i << ", lower " << lower);
      CHECK(fast.split(texts[i]) == slow.split(texts[i]));
    }
  }
}

TEST_CASE("WordSplitter: the scratch overload appends views, and equals the string overload", "[text][words]") {
  const WordSplitter splitter{SplitOptions{}};
  WordSplitter::Scratch scratch;
  std::vector<std::string_view> out{"kept"};
  splitter.split("Two WORDS", scratch, out);
  CHECK(out == std::vector<std::string_view>{"kept", "two", "words"});
  splitter.split("ünd drei!", scratch, out);  // scratch reused: only the new views are valid now
  REQUIRE(out.size() == 5);
  CHECK(out[3] == "ünd");
  CHECK(out[4] == "drei");
  CHECK(splitter.split("ünd drei!") == Words{"ünd", "drei"});
}

TEST_CASE("WordSplitter: an empty split and filters or split that are not UTF-8 are refused", "[text][words]") {
  CHECK_THROWS_AS(WordSplitter(with_split("")), std::invalid_argument);
  CHECK_THROWS_AS(WordSplitter(with_filters("ab\xFF")), std::invalid_argument);
  CHECK_THROWS_AS(WordSplitter(with_split("\xC3")), std::invalid_argument);
}
