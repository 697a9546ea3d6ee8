// Words misspelt on purpose: each perturbation's edit, determinism, the rate, the target words.
#include <algorithm>

#include <catch2/catch.hpp>

#include "attn/text/perturb.h"
#include "attn/text/unicode.h"

using namespace attn;
using text::Perturbation;

namespace {
text::PerturbOptions every_word() {
  text::PerturbOptions o;
  o.rate = 1.0;
  return o;
}
}  // namespace

TEST_CASE("each perturbation's edit of a word", "[perturb]") {
  const auto one = [](Perturbation p, std::uint64_t row = 3) { return text::perturb("stupid", p, every_word(), row).text; };
  const std::string repeat = one(Perturbation::kRepeat);
  CHECK(repeat.size() == 8);  // one inner letter three times
  CHECK(repeat.front() == 's');
  CHECK(repeat.back() == 'd');
  const std::string leet = one(Perturbation::kLeet);
  CHECK(leet.size() == 6);
  CHECK(leet.find_first_of("0123456789") != std::string::npos);
  const std::string punct = one(Perturbation::kPunctuation);
  CHECK(punct.size() == 7);
  CHECK(punct.find_first_of(".-_") != std::string::npos);
  CHECK(punct.find_first_of(".-_") > 0);
  CHECK(punct.find_first_of(".-_") < 6);
  CHECK(one(Perturbation::kSpace).find(' ') != std::string::npos);
  const std::string mask = one(Perturbation::kMask);
  CHECK((mask == "st*pid" || mask == "stup*d"));  // an inner vowel
  CHECK(text::perturb("fuck", Perturbation::kMask, every_word(), 1).text == "f*ck");
  const std::string glyph = one(Perturbation::kHomoglyph);
  CHECK(glyph.size() == 7);  // one letter became a two-byte Cyrillic one
  CHECK(text::find_invalid_utf8(glyph) == std::string::npos);
  CHECK(glyph != "stupid");
}

TEST_CASE("the evasions no training default draws: spaced, doubled marks, invisible, mixed, no vowels, suffix", "[perturb]") {
  const auto one = [](Perturbation p, const std::string& word = "stupid", std::uint64_t row = 3) {
    return text::perturb(word, p, every_word(), row).text;
  };
  CHECK(one(Perturbation::kSpaced) == "s t u p i d");
  CHECK(one(Perturbation::kSpaced, "idiot") == "i d i o t");
  const std::string marks = one(Perturbation::kPunctuation2);
  CHECK(marks.size() == 8);
  const std::size_t at = marks.find_first_of(".-_*");
  REQUIRE(at != std::string::npos);
  CHECK(at > 0);
  CHECK(marks[at + 1] == marks[at]);  // the same mark twice
  CHECK(marks.substr(0, at) + marks.substr(at + 2) == "stupid");
  for (const std::uint64_t row : {1, 2, 3, 4, 5}) {
    const std::string hidden = one(Perturbation::kZeroWidth, "stupid", row);
    CHECK(hidden.size() == 9);  // a three-byte U+200B, U+200C or U+200D inside
    CHECK(text::find_invalid_utf8(hidden) == std::string::npos);
    const std::size_t z = hidden.find("\xE2\x80");
    REQUIRE(z != std::string::npos);
    CHECK((z > 0 && z < 6));
    CHECK(hidden.substr(0, z) + hidden.substr(z + 3) == "stupid");
    const std::string mixed = one(Perturbation::kMixed, "stupid", row);
    CHECK(mixed.size() == 10);  // and one letter a two-byte Cyrillic one
    CHECK(text::find_invalid_utf8(mixed) == std::string::npos);
    CHECK(mixed.find("\xE2\x80") != std::string::npos);
  }
  CHECK(one(Perturbation::kNoVowels) == "stpd");
  CHECK(one(Perturbation::kNoVowels, "fuck") == "fck");
  CHECK(one(Perturbation::kNoVowels, "idiot") == "idt");  // the first letter stays
  const std::string suffix = one(Perturbation::kSuffix);
  CHECK(suffix.size() == 8);
  CHECK(suffix.substr(0, 6) == "stupid");
  CHECK(std::all_of(suffix.begin() + 6, suffix.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }));
}

TEST_CASE("--misspell draws the first six edits unless told otherwise; the others stay unseen", "[perturb]") {
  std::vector<std::string> defaults;
  for (const auto& info : text::perturbations())
    if (info.misspell_default) defaults.push_back(info.name);
  CHECK(defaults == std::vector<std::string>{"repeat", "leet", "punctuation", "space", "mask", "homoglyph"});
  CHECK(text::perturbations().size() == 12);
  CHECK(text::parse_perturbation("vowels", "--perturbations") == Perturbation::kNoVowels);
}

TEST_CASE("perturbations are deterministic: the same seed and row give the same text, other rows others", "[perturb]") {
  const std::string t = "You are a stupid idiot and your edits are garbage, moron";
  text::PerturbOptions o;
  o.rate = 0.5;
  for (const auto& info : text::perturbations()) {
    INFO(info.name);
    const auto a = text::perturb(t, info.perturbation, o, 7), b = text::perturb(t, info.perturbation, o, 7);
    CHECK(a.text == b.text);
    CHECK(a.targets == 6);  // stupid idiot your edits garbage moron: the words of 4 or more letters
    bool differs = false;
    for (std::uint64_t row = 1; row < 20 && !differs; ++row) differs = text::perturb(t, info.perturbation, o, row).text != a.text;
    CHECK(differs);
  }
  // A fixed case, so a change of the generator (which would change every published figure) shows.
  CHECK(text::perturb(t, Perturbation::kSpace, o, 1).text == "You are a stupid idiot and y our edits are g arbage, mo ron");
}

TEST_CASE("the rate: 0 changes nothing, 1 every target word, the share follows the rate", "[perturb]") {
  const std::string t = "thanks for the edit, see the talk page about idiots";
  text::PerturbOptions none;
  none.rate = 0;
  CHECK(text::perturb(t, Perturbation::kMask, none, 1).text == t);
  const auto all = text::perturb(t, Perturbation::kSpace, every_word(), 1);
  CHECK(all.changed == all.targets);
  CHECK(all.targets == 6);  // thanks, edit, talk, page, about, idiots
  std::int64_t targets = 0, changed = 0;
  text::PerturbOptions third;
  third.rate = 0.3;
  for (std::uint64_t row = 0; row < 2000; ++row) {
    const auto p = text::perturb(t, Perturbation::kRepeat, third, row);
    targets += p.targets;
    changed += p.changed;
  }
  CHECK(static_cast<double>(changed) / static_cast<double>(targets) == Approx(0.3).margin(0.02));
}

TEST_CASE("target words: only those of the list, whatever their case, text outside the words kept byte for byte", "[perturb]") {
  text::PerturbOptions o = every_word();
  o.words = {"idiot"};
  const auto p = text::perturb("An IDIOT, an idiot\r\nand café idiots", Perturbation::kMask, o, 1);
  CHECK(p.targets == 2);  // "idiots" is another word
  CHECK(p.text.substr(0, 3) == "An ");
  CHECK(p.text.find("\r\nand caf\xC3\xA9 idiots") != std::string::npos);
  CHECK(p.text.find("IDIOT") == std::string::npos);
  CHECK(p.text.find('*') != std::string::npos);
  // A run of ASCII letters inside a non-ASCII word is not a word of its own.
  CHECK(text::perturb("\xC3\xA9tudiant", Perturbation::kSpace, every_word(), 1).targets == 0);
}

TEST_CASE("perturbations by name", "[perturb]") {
  CHECK(text::parse_perturbation("leet", "--perturbations") == Perturbation::kLeet);
  CHECK_THROWS_WITH(text::parse_perturbation("typo", "--perturbations"),
                    Catch::Contains("--perturbations: unknown perturbation 'typo'") && Catch::Contains("homoglyph"));
  CHECK(text::perturbations().size() == 12);
}

TEST_CASE("misspell: each changed word gets one of the kinds given, drawn per word, deterministically", "[perturb]") {
  const std::string t = "thanks for the edit, see the talk page about idiots and their garbage edits today";
  // One kind given: every changed word is that kind's edit (a space inside it).
  const auto spaced = text::misspell(t, {Perturbation::kSpace}, every_word(), 4);
  CHECK(spaced.changed == spaced.targets);
  CHECK(spaced.targets == 10);
  CHECK(std::count(spaced.text.begin(), spaced.text.end(), ' ') == std::count(t.begin(), t.end(), ' ') + 10);
  // All kinds: over many rows, each kind's mark shows up, and the same row gives the same text.
  const std::vector<Perturbation> all = {Perturbation::kRepeat, Perturbation::kLeet, Perturbation::kPunctuation,
                                         Perturbation::kSpace,  Perturbation::kMask, Perturbation::kHomoglyph};
  bool digit = false, star = false, cyrillic = false, dot = false;
  for (std::uint64_t row = 0; row < 50; ++row) {
    const std::string m = text::misspell(t, all, every_word(), row).text;
    CHECK(m == text::misspell(t, all, every_word(), row).text);
    digit = digit || m.find_first_of("0123456789") != std::string::npos;
    star = star || m.find('*') != std::string::npos;
    cyrillic = cyrillic || m.find('\xD1') != std::string::npos || m.find('\xD0') != std::string::npos;
    dot = dot || m.find_first_of("-_") != std::string::npos;
  }
  CHECK((digit && star && cyrillic && dot));
  // Within one text, words get different kinds (not one kind per text).
  const std::string one = text::misspell(t, all, every_word(), 11).text;
  const bool several = (one.find('*') != std::string::npos) + (one.find_first_of("0123456789") != std::string::npos) +
                           (one.find_first_of(".-_") != std::string::npos) +
                           (one.find('\xD1') != std::string::npos || one.find('\xD0') != std::string::npos) >=
                       2;
  CHECK(several);
  text::PerturbOptions none;
  none.rate = 0;
  CHECK(text::misspell(t, all, none, 1).text == t);
  CHECK_THROWS_WITH(text::misspell(t, {}, every_word(), 1), Catch::Contains("no kind"));
}
