// Character spans (text/char_spans.h): words and their code points, chosen words back to the
// characters Toxic Spans marks (punctuation, emoji, CRLF, repeated spaces), a spans cell read.
#include <catch2/catch.hpp>

#include "attn/text/char_spans.h"

using namespace attn;

namespace {
std::vector<std::int64_t> range(std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> out;
  for (std::int64_t c = begin; c < end; ++c) out.push_back(c);
  return out;
}
std::vector<std::int64_t> join(std::vector<std::int64_t> a, const std::vector<std::int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

TEST_CASE("char spans: words counted in code points, bytes kept, repeated spaces and CRLF", "[text][spans]") {
  // "é" is 2 bytes and 1 character; the emoji 4 bytes and 1 character.
  const std::string t = "  héllo  \xF0\x9F\x98\xA1 you\r\nidiot";
  CHECK(text::code_points(t) == 21);
  const auto words = text::word_ranges(t);
  REQUIRE(words.size() == 4);
  CHECK((words[0].begin == 2 && words[0].end == 7));
  CHECK(t.substr(words[0].byte_begin, words[0].byte_end - words[0].byte_begin) == "héllo");
  CHECK((words[1].begin == 9 && words[1].end == 10));   // the emoji
  CHECK((words[2].begin == 11 && words[2].end == 15));  // "you\r": a carriage return stays with its word
  CHECK((words[3].begin == 16 && words[3].end == 21));  // after the newline
  CHECK(text::word_ranges("").empty());
  CHECK(text::word_ranges(" \t\n").empty());
}

TEST_CASE("char spans: a chosen word's letters without the punctuation around it, the gap between two chosen", "[text][spans]") {
  const std::string t = "you \"stupid\", idiot!!  go";
  CHECK(text::chosen_word_offsets(t, {false, true, false, false}) == range(5, 11));  // "stupid" without the quotes and comma
  CHECK(text::chosen_word_offsets(t, {false, true, true, false}) == range(5, 19));   // through ", " to "idiot", not "!!"
  CHECK(text::chosen_word_offsets(t, {false, false, true, true}) == range(14, 25));  // the gap holds "!!  "
  CHECK(text::chosen_word_offsets(t, {true, false, true, false}) == join(range(0, 3), range(14, 19)));
  CHECK(text::chosen_word_offsets(t, {false, false, false, false}).empty());
  // A word without a letter or digit is taken whole; a letter beyond ASCII is a letter.
  CHECK(text::chosen_word_offsets("so \xF0\x9F\x98\xA1!", {false, true}) == range(3, 5));
  CHECK(text::chosen_word_offsets("¡idiotá!", {true}) == range(1, 7));
  CHECK_THROWS_AS(text::chosen_word_offsets(t, {true}), std::invalid_argument);
}

TEST_CASE("char spans: the words the marked characters touch, and back", "[text][spans]") {
  const std::string t = "you \"stupid\", idiot!!  go";
  CHECK(text::words_touched(t, {5, 6, 21}) == std::vector<bool>{false, true, false, false});     // 21: a space
  CHECK(text::words_touched(t, {4, 13, 14, 24}) == std::vector<bool>{false, true, true, true});  // 4: a quote of "stupid"
  CHECK(text::words_touched(t, {}) == std::vector<bool>{false, false, false, false});
  const std::vector<bool> chosen = {false, true, true, false};
  CHECK(text::words_touched(t, text::chosen_word_offsets(t, chosen)) == chosen);
}

TEST_CASE("char spans: a spans cell as SemEval ships it, and the cells it refuses", "[text][spans]") {
  CHECK(text::parse_span_offsets("[3, 4, 5]", 6, "f.csv:2: column 1 (spans)") == std::vector<std::int64_t>{3, 4, 5});
  CHECK(text::parse_span_offsets("[]", 0, "f.csv:2: column 1 (spans)").empty());
  CHECK_THROWS_WITH(text::parse_span_offsets("[3, \"a\"]", 6, "f.csv:2: column 1 (spans)"),
                    "f.csv:2: column 1 (spans) not a list of integers: '[3, \"a\"]'");
  CHECK_THROWS_WITH(text::parse_span_offsets("3, 4", 6, "w"), Catch::Contains("not a list of integers"));
  CHECK_THROWS_WITH(text::parse_span_offsets("{\"a\": 1}", 6, "w"), Catch::Contains("not a list of integers"));
  CHECK_THROWS_WITH(text::parse_span_offsets("[1.5]", 6, "w"), Catch::Contains("not a list of integers"));
  CHECK_THROWS_WITH(text::parse_span_offsets("[-1]", 6, "w"), "w index -1 outside the text's 6 characters");
  CHECK_THROWS_WITH(text::parse_span_offsets("[6]", 6, "w"), "w index 6 outside the text's 6 characters");
}
