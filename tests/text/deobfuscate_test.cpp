// The normalising reader (attn/text/deobfuscate.h): each obfuscation it undoes on hand-made words,
// what it leaves alone (ordinary text byte for byte, numbers, ordinals, Cyrillic words, mentions).
#include <catch2/catch.hpp>

#include "attn/text/deobfuscate.h"
#include "attn/text/perturb.h"
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
