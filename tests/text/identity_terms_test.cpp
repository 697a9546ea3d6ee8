// Identity terms for the audit: mentions at word boundaries, swaps that keep case and punctuation,
// the term list a user gives, and the template sentences.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <set>

#include "attn/text/identity_terms.h"

using namespace attn;

namespace {
std::string terms_file(const std::string& name, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() / ("attn_terms_" + name + "_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}
}  // namespace

TEST_CASE("identity terms: a mention is the term at word boundaries, any case, a plural s allowed", "[identity_terms]") {
  const auto at = [](const std::string& text, const std::string& term) {
    std::vector<std::size_t> out;
    for (const text::Mention& m : text::find_mentions(text, term)) {
      out.push_back(m.begin);
      CHECK(m.end - m.begin == term.size());
    }
    return out;
  };
  CHECK(at("Muslim, muslims and MUSLIM!", "muslim") == std::vector<std::size_t>{0, 8, 20});
  CHECK(at("muslimah muslim2 premuslim _muslim", "muslim") == std::vector<std::size_t>{28});  // '_' is not a word's letter
  CHECK(at("gay gayest gays", "gay") == std::vector<std::size_t>{0, 11});
  CHECK(at("caf\xc3\xa9gay gay\xc3\xa9", "gay").empty());  // next to a non-ASCII letter: inside a word
  CHECK(at("a native american, Native  American", "native american") == std::vector<std::size_t>{2});  // one space between words
  CHECK(at("", "gay").empty());
}

TEST_CASE("identity terms: a swap keeps the mention's case, its plural and the punctuation around", "[identity_terms]") {
  CHECK(text::swap_term("Muslim, I said.", "muslim", "christian") == "Christian, I said.");
  CHECK(text::swap_term("MUSLIM! muslims (Muslims)", "muslim", "christian") == "CHRISTIAN! christians (Christians)");
  CHECK(text::swap_term("gay pride, not gayest", "gay", "straight") == "straight pride, not gayest");
  CHECK(text::swap_term("A Native american friend", "native american", "white") == "A White friend");
  CHECK(text::swap_term("nothing here", "gay", "straight") == "nothing here");
  CHECK(text::swap_term("I", "i", "we") == "We");  // one capital letter: a capital first letter, not all capitals
}

TEST_CASE("identity terms: the built-in list and a user's file", "[identity_terms]") {
  const auto& builtin = text::builtin_identity_terms();
  CHECK(builtin.size() == 24);
  CHECK(std::set<std::string>(builtin.begin(), builtin.end()).size() == builtin.size());
  CHECK(text::read_identity_terms(terms_file("ok", "Muslim\r\nchristian  \nNative American\n")) ==
        std::vector<std::string>{"muslim", "christian", "native american"});
  CHECK_THROWS_WITH(text::read_identity_terms(terms_file("empty", "muslim\n\nchristian\n")),
                    Catch::Contains("line 2") && Catch::Contains("empty line"));
  CHECK_THROWS_WITH(text::read_identity_terms(terms_file("twice", "muslim\nchristian\nMuslim\n")),
                    Catch::Contains("line 3") && Catch::Contains("repeats line 1"));
  CHECK_THROWS_WITH(text::read_identity_terms(terms_file("chars", "muslim\nl33t\n")),
                    Catch::Contains("line 2") && Catch::Contains("ASCII letters"));
  CHECK_THROWS_WITH(text::read_identity_terms(terms_file("spaces", "muslim\nnative  american\n")), Catch::Contains("one space"));
  CHECK_THROWS_WITH(text::read_identity_terms(terms_file("one", "muslim\n")), Catch::Contains("at least 2"));
  CHECK_THROWS_WITH(text::read_identity_terms("/nonexistent/terms.txt"), Catch::Contains("/nonexistent/terms.txt"));
}

TEST_CASE("identity terms: every template filled with the term, half with a toxic filler, the term's words placed", "[identity_terms]") {
  for (const std::string term : {"gay", "native american"}) {
    INFO(term);
    const auto sentences = text::template_sentences(term);
    REQUIRE(sentences.size() == 112);
    std::size_t toxic = 0;
    std::set<std::string> distinct;
    for (const auto& s : sentences) {
      toxic += s.toxic;
      distinct.insert(s.text);
      // The term's words are the sentence's words [first_word, first_word + words), any case.
      std::vector<std::string> words;
      std::size_t start = 0;
      for (std::size_t sp; (sp = s.text.find(' ', start)) != std::string::npos; start = sp + 1)
        words.push_back(s.text.substr(start, sp - start));
      words.push_back(s.text.substr(start));
      std::string placed;
      for (std::size_t w = s.first_word; w < s.first_word + s.words; ++w) placed += (placed.empty() ? "" : " ") + words.at(w);
      for (char& c : placed) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      CHECK(placed == term);
      CHECK(text::find_mentions(s.text, term).size() == 1);
      // The filler is the word the frame was filled with (the sentence's last word, or the verb).
      CHECK((s.text.find(" " + s.filler + ".") != std::string::npos || s.text.find(" " + s.filler + " ") != std::string::npos));
    }
    CHECK(toxic == 56);
    CHECK(distinct.size() == sentences.size());
  }
}

TEST_CASE("identity terms: a counterfactual copy swaps one mentioned term for another, the same for the same seed", "[identity_terms]") {
  const std::vector<std::string> terms = {"muslim", "christian", "jewish"};
  CHECK_FALSE(text::counterfactual_copy("nothing to swap here", terms, 1).has_value());
  CHECK_FALSE(text::counterfactual_copy("Muslims are people", {"muslim"}, 1).has_value());  // no other term to swap in
  std::set<std::string> copies;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const auto copy = text::counterfactual_copy("Muslims pray, like MUSLIM friends.", terms, seed);
    REQUIRE(copy.has_value());
    CHECK(*copy == text::counterfactual_copy("Muslims pray, like MUSLIM friends.", terms, seed));  // repeatable
    copies.insert(*copy);
  }
  // Every mention of the drawn term swapped, in its case; each other term drawn by some seed, never the term itself.
  CHECK(copies == std::set<std::string>{"Christians pray, like CHRISTIAN friends.", "Jewishs pray, like JEWISH friends."});
  // Two terms mentioned: one of them swapped per copy, the other left as it was.
  std::set<std::string> two;
  for (std::uint64_t seed = 0; seed < 64; ++seed) two.insert(*text::counterfactual_copy("a muslim and a jewish man", terms, seed));
  CHECK(two == std::set<std::string>{"a christian and a jewish man", "a jewish and a jewish man", "a muslim and a christian man",
                                     "a muslim and a muslim man"});
}
