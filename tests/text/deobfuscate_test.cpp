// The normalising reader (attn/text/deobfuscate.h): each obfuscation it undoes on hand-made words,
// what it leaves alone (ordinary text byte for byte, numbers, ordinals, Cyrillic words, mentions).
#include <algorithm>

#include <catch2/catch.hpp>

#include "attn/text/deobfuscate.h"
#include "attn/text/perturb.h"
#include "attn/text/subwords.h"
#include "attn/text/unicode.h"

using attn::text::deobfuscate;

TEST_CASE("each obfuscation it undoes", "[text][deobfuscate]") {
  CHECK(deobfuscate("you stuuupid idiooot") == "you stupid idiot");
  CHECK(deobfuscate("id1ot 5tupid m0r0n h4x0r b@d $hit") == "idiot stupid moron haxor bad shit");
  CHECK(deobfuscate("st.upid st..upid st_upid st**upid") == "stupid stupid stupid stupid");
  CHECK(deobfuscate("\xD1\x95tupid id\xD1\x96ot") == "stupid idiot");  // Cyrillic ѕ, і
  CHECK(deobfuscate("\xCE\xBF"
                    "ops m\xCE\xBFron") == "oops moron");  // Greek ο
  CHECK(deobfuscate("stu\xE2\x80\x8Bpid i\xE2\x80\x8D"
                    "diot") == "stupid idiot");                 // zero-width space, joiner
  CHECK(deobfuscate("\xD1\x95tu\xE2\x80\x8Cpid") == "stupid");  // mixed
  CHECK(deobfuscate("what a s t u p i d post") == "what a stupid post");
  CHECK(deobfuscate("(5tupid)") == "(stupid)");
}

TEST_CASE("ordinary text comes back byte for byte", "[text][deobfuscate]") {
  for (const char* same : {"Thanks for the edit, see the talk page.", "good seed  keeps\ttheir\nlines", "in 2020 I paid $100 for 3d prints",
                           "the 1st, 2nd, 3rd and 4th of them", "e.g. U.S. well-known x_y", "@user said hi", "",
                           "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 caf\xC3\xA9", "a b", "I am ok...", "zzz"}) {
    INFO(same);
    const std::string kept = deobfuscate(same);
    if (std::string(same) == "zzz")
      CHECK(kept == "z");  // three of a letter are one
    else
      CHECK(kept == same);
  }
}

TEST_CASE("it undoes what attn robustness does with these edits, and leaves valid UTF-8", "[text][deobfuscate]") {
  using attn::text::Perturbation;
  attn::text::PerturbOptions every;
  every.rate = 1;
  const std::string text = "you are so stupid and an idiot or moron";
  for (const Perturbation p :
       {Perturbation::kRepeat, Perturbation::kHomoglyph, Perturbation::kSpaced, Perturbation::kZeroWidth, Perturbation::kMixed}) {
    for (std::uint64_t row = 1; row <= 20; ++row) {
      const std::string attacked = attn::text::perturb(text, p, every, row).text;
      INFO(attn::text::perturbation_name(p) << ": " << attacked);
      const std::string read = deobfuscate(attacked);
      CHECK(attn::text::find_invalid_utf8(read) == std::string::npos);
      if (p == Perturbation::kRepeat)  // moron's o tripled, say: cut to one
        CHECK((read == text || read.find("stupid") != std::string::npos));
      else
        CHECK(read == text);
    }
  }
}

namespace {

/// A vocabulary by hand: each word's rank is its place in the list (1 the most frequent).
attn::text::KnownWords vocabulary(const std::vector<std::string>& words) {
  attn::text::KnownWords known;
  known.rank = [words](std::string_view w) -> std::optional<std::int32_t> {
    for (std::size_t i = 0; i < words.size(); ++i)
      if (words[i] == w) return static_cast<std::int32_t>(i + 1);
    return std::nullopt;
  };
  known.with_skeleton = [words](std::string_view skeleton) -> std::optional<std::string_view> {
    for (const std::string& w : words)
      if (attn::text::consonant_skeleton(w) == skeleton) return std::string_view(w);
    return std::nullopt;
  };
  return known;
}

}  // namespace

TEST_CASE("punctuation around a spaced run stays outside it", "[text][deobfuscate]") {
  CHECK(deobfuscate("<u s e r> hi") == "<user> hi");
  CHECK(deobfuscate("you are s t u p i d.") == "you are stupid.");
  CHECK(deobfuscate("(i d i o t), go") == "(idiot), go");
  CHECK(deobfuscate("x. y z") == "x. y z");  // punctuation after the first letter ends the run
}

TEST_CASE("with a vocabulary, a run of letters is cut into the fewest, likeliest known words", "[text][deobfuscate]") {
  const auto known = vocabulary({"i", "a", "the", "to", "you", "super", "guess", "retard", "fucking", "bowl", "argentina", "owl", "superb",
                                 "es", "us", "tr", "user", "stupid"});
  CHECK(deobfuscate("a f u c k i n g r e t a r d", &known) == "a fucking retard");
  CHECK(deobfuscate("a r g e n t i n a", &known) == "argentina");  // not "a rgentina"
  CHECK(deobfuscate("what a s t u p i d post", &known) == "what a stupid post");
  CHECK(deobfuscate("i g u e s s so", &known) == "i guess so");
  CHECK(deobfuscate("s u p e r b o w l", &known) == "super bowl");       // super (6) and bowl (10) before superb (13) and owl (12)
  CHECK(deobfuscate("e s t r u s", &known) == "estrus");                 // no pieces of two letters: no cut, joined whole
  CHECK(deobfuscate("<u s e r> <u s e r>", &known) == "<user> <user>");  // the two runs are apart
  // Without one, the same runs are joined whole (an "a" before three or more letters kept apart).
  CHECK(deobfuscate("a f u c k i n g r e t a r d") == "a fuckingretard");
  CHECK(deobfuscate("a r g e n t i n a") == "a rgentina");
}

TEST_CASE("with a vocabulary, two pieces of letters join when they read as one known word", "[text][deobfuscate]") {
  const auto known = vocabulary({"a", "is", "this", "still", "way", "away", "live", "ill", "alive", "st", "stupid", "well", "known", "th"});
  CHECK(deobfuscate("so stu pid, really", &known) == "so stupid, really");  // neither piece known
  CHECK(deobfuscate("(stu pid)", &known) == "(stupid)");
  CHECK(deobfuscate("st ill here", &known) == "still here");  // still is more frequent than st and ill
  CHECK(deobfuscate("st-upid st--upid", &known) == "stupid stupid");
  CHECK(deobfuscate("a way a live th is", &known) == "a way a live th is");  // a, is: more frequent than the join
  CHECK(deobfuscate("well-known", &known) == "well-known");                  // "wellknown" unknown
  CHECK(deobfuscate("stu pid") == "stu pid");                                // no vocabulary: no join
}

TEST_CASE("with a vocabulary, the steps keep text valid and long runs bounded", "[text][deobfuscate]") {
  const auto known = vocabulary({"a", "i", "aaa"});
  std::string many;
  for (int k = 0; k < 5000; ++k) many += "a ";
  const std::string read = deobfuscate(many, &known);
  // 5,000 letters in the fewest pieces: 1,666 "aaa" and two "a", 1,667 spaces between them and the last one kept
  CHECK(std::count(read.begin(), read.end(), ' ') == 1668);
  CHECK(attn::text::find_invalid_utf8(deobfuscate("\xD1\x95 t u \xE2\x80\x8B p i d caf\xC3\xA9", &known)) == std::string::npos);
}

TEST_CASE("with a vocabulary, a '*' is read as a letter and a word without vowels by its skeleton", "[text][deobfuscate]") {
  const auto known = vocabulary({"you", "are", "stop", "fuck", "stupid", "stoped", "idiot", "plus", "people", "fucking"});
  CHECK(deobfuscate("you are stpd", &known) == "you are stupid");  // stupid before stoped: the more frequent
  CHECK(deobfuscate("fck (idt)! ppl", &known) == "fuck (idiot)! people");
  CHECK(deobfuscate("Stpd", &known) == "stupid");  // (the tokenizer lowers it anyway)
  CHECK(deobfuscate("st*pid f*cking", &known) == "stupid fucking");
  CHECK(deobfuscate("st*p1d", &known) == "stupid");          // the leetspeak read first: not "st?p", stop
  CHECK(deobfuscate("ab*cd st*rs", &known) == "abcd strs");  // no known word: the '*' dropped as without one
  // Words with vowels, short words and digits stay as they are.
  CHECK(deobfuscate("plus stupidity zz 2nd", &known) == "plus stupidity zz 2nd");
  CHECK(deobfuscate("stpd st*pid") == "stpd stpid");  // without a vocabulary
}

TEST_CASE("with a vocabulary, a known word without vowels is read by its skeleton only when far rarer", "[text][deobfuscate]") {
  // Ranks are places in the list: bitch 1 and btch 10 (ten times further down: read); fuck 2 and
  // fck 18 (nine times: kept); goyim 3 and gym 4 (kept).
  const auto known =
      vocabulary({"bitch", "fuck", "goyim", "gym", "a", "b", "c", "d", "e", "btch", "f", "g", "h", "j", "k", "l", "m", "fck", "wtf"});
  CHECK(deobfuscate("btch, fck at the gym wtf", &known) == "bitch, fck at the gym wtf");  // wtf: its skeleton's own word
  CHECK(deobfuscate("(BTCH)!", &known) == "(bitch)!");
}

TEST_CASE("with a vocabulary, an unknown word that is a known one with one or two characters added is read as it", "[text][deobfuscate]") {
  const auto known =
      vocabulary({"bitch", "stupid", "idiot", "idiots", "you", "kill", "fag", "plus", "a", "btch"});  // btch: 10 times further down
  CHECK(deobfuscate("you stupidzq idiot7 (stupid42)!", &known) == "you stupid idiot (stupid)!");
  CHECK(deobfuscate("idiotsx idiot7x kill7", &known) == "idiots idiot kill");  // one off before two (idiotsx); a stem of four letters
  CHECK(deobfuscate("Stupids Idiot7", &known) == "Stupid Idiot");              // its case kept
  CHECK(deobfuscate("btchzq", &known) == "bitch");                             // btch, then read by its skeleton
  const auto with_inst = vocabulary({"instead", "inst"});
  CHECK(deobfuscate("instd", &with_inst) == "instead");  // no vowel after its first letter: read whole, not cut to inst
  // Known words, three characters added, a stem of three letters, @mentions and #hashtags stay.
  CHECK(deobfuscate("idiots plusses stupidxyz fagzq @stupid12 #idiotzq", &known) == "idiots plusses stupidxyz fagzq @stupid12 #idiotzq");
  CHECK(deobfuscate("stupidzq") == "stupidzq");  // without a vocabulary
}
