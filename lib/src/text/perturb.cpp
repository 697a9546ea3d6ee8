// Deterministic misspellings (see perturb.h).
#include "attn/text/perturb.h"

#include <cctype>
#include <stdexcept>

#include "draws.h"

namespace attn::text {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_vowel(char c) {
  const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l == 'a' || l == 'e' || l == 'i' || l == 'o' || l == 'u';
}

char leet_of(char c) {
  switch (std::tolower(static_cast<unsigned char>(c))) {
    case 'a':
      return '4';
    case 'e':
      return '3';
    case 'i':
      return '1';
    case 'o':
      return '0';
    case 's':
      return '5';
    case 't':
      return '7';
    case 'l':
      return '1';
    case 'g':
      return '9';
    case 'b':
      return '8';
    default:
      return 0;
  }
}

/// The Cyrillic letter that looks like Latin `c`, as UTF-8; nullptr if none.
const char* homoglyph_of(char c) {
  switch (c) {
    case 'a':
      return "\xD0\xB0";  // U+0430
    case 'c':
      return "\xD1\x81";  // U+0441
    case 'e':
      return "\xD0\xB5";  // U+0435
    case 'i':
      return "\xD1\x96";  // U+0456
    case 'o':
      return "\xD0\xBE";  // U+043E
    case 'p':
      return "\xD1\x80";  // U+0440
    case 's':
      return "\xD1\x95";  // U+0455
    case 'x':
      return "\xD1\x85";  // U+0445
    case 'y':
      return "\xD1\x83";  // U+0443
    case 'A':
      return "\xD0\x90";  // U+0410
    case 'B':
      return "\xD0\x92";  // U+0412
    case 'C':
      return "\xD0\xA1";  // U+0421
    case 'E':
      return "\xD0\x95";  // U+0415
    case 'H':
      return "\xD0\x9D";  // U+041D
    case 'K':
      return "\xD0\x9A";  // U+041A
    case 'M':
      return "\xD0\x9C";  // U+041C
    case 'O':
      return "\xD0\x9E";  // U+041E
    case 'P':
      return "\xD0\xA0";  // U+0420
    case 'T':
      return "\xD0\xA2";  // U+0422
    case 'X':
      return "\xD0\xA5";  // U+0425
    default:
      return nullptr;
  }
}

/// The invisible characters an edit may hide inside a word, as UTF-8: zero-width space, non-joiner, joiner.
const char* const kInvisible[] = {"\xE2\x80\x8B", "\xE2\x80\x8C", "\xE2\x80\x8D"};

/// A position of `word` whose letter `fits`, drawn among them; npos if none.
template <class Fits>
std::size_t pick(const std::string& word, std::size_t from, std::size_t to, Draws& d, Fits fits) {
  std::vector<std::size_t> at;
  for (std::size_t i = from; i < to; ++i)
    if (fits(word[i])) at.push_back(i);
  return at.empty() ? std::string::npos : at[d.below(at.size())];
}

/// `w` with one of its Latin letters that has a Cyrillic look-alike (drawn) replaced by it.
std::string with_homoglyph(std::string w, Draws& d) {
  const std::size_t i = pick(w, 0, w.size(), d, [](char c) { return homoglyph_of(c) != nullptr; });
  if (i != std::string::npos) w.replace(i, 1, homoglyph_of(w[i]));
  return w;
}

/// `word` (4 or more ASCII letters) edited by `p`; unchanged when it has no letter the edit applies to.
std::string edit(const std::string& word, Perturbation p, Draws& d) {
  const std::size_t n = word.size(), inner = 1 + d.below(n - 2);  // a position inside: 1 .. n - 2
  std::string w = word;
  switch (p) {
    case Perturbation::kRepeat:
      return w.insert(inner, 2, w[inner]);
    case Perturbation::kLeet: {
      const std::size_t i = pick(w, 0, n, d, [](char c) { return leet_of(c) != 0; });
      if (i != std::string::npos) w[i] = leet_of(w[i]);
      return w;
    }
    case Perturbation::kPunctuation:
      return w.insert(inner, 1, ".-_"[d.below(3)]);
    case Perturbation::kSpace:
      return w.insert(inner, 1, ' ');
    case Perturbation::kMask: {
      std::size_t i = pick(w, 1, n - 1, d, is_vowel);
      w[i == std::string::npos ? inner : i] = '*';
      return w;
    }
    case Perturbation::kHomoglyph:
      return with_homoglyph(w, d);
    case Perturbation::kSpaced: {
      std::string spaced;
      for (std::size_t i = 0; i < n; ++i) (spaced += i ? " " : "") += w[i];
      return spaced;
    }
    case Perturbation::kPunctuation2:
      return w.insert(inner, 2, ".-_*"[d.below(4)]);
    case Perturbation::kZeroWidth:
      return w.insert(inner, kInvisible[d.below(3)]);
    case Perturbation::kMixed: {
      w.insert(inner, kInvisible[d.below(3)]);  // inside; the look-alike then goes anywhere
      return with_homoglyph(w, d);
    }
    case Perturbation::kNoVowels: {
      std::string kept(1, w[0]);
      for (std::size_t i = 1; i < n; ++i)
        if (!is_vowel(w[i])) kept += w[i];
      return kept.size() >= 2 ? kept : w;  // (a word of vowels stays)
    }
    case Perturbation::kSuffix: {
      static const char kNoise[] = "abcdefghijklmnopqrstuvwxyz0123456789";
      for (int k = 0; k < 2; ++k) w += kNoise[d.below(sizeof kNoise - 1)];
      return w;
    }
  }
  return w;
}

}  // namespace

const std::vector<PerturbationInfo>& perturbations() {
  static const std::vector<PerturbationInfo> all = {
      {Perturbation::kRepeat, "repeat", "stuuupid", true},
      {Perturbation::kLeet, "leet", "5tupid", true},
      {Perturbation::kPunctuation, "punctuation", "st.upid", true},
      {Perturbation::kSpace, "space", "stu pid", true},
      {Perturbation::kMask, "mask", "st*pid", true},
      {Perturbation::kHomoglyph, "homoglyph", "stuріd (Cyrillic р, і)", true},
      {Perturbation::kSpaced, "spaced", "s t u p i d", false},
      {Perturbation::kPunctuation2, "punctuation2", "st..upid", false},
      {Perturbation::kZeroWidth, "zero-width", "stu(U+200B)pid", false},
      {Perturbation::kMixed, "mixed", "ѕtu(U+200B)pid", false},
      {Perturbation::kNoVowels, "vowels", "stpd", false},
      {Perturbation::kSuffix, "suffix", "stupidzq", false},
  };
  return all;
}

const char* perturbation_name(Perturbation p) {
  for (const PerturbationInfo& i : perturbations())
    if (i.perturbation == p) return i.name;
  throw std::logic_error("perturbation_name: unknown perturbation");
}

Perturbation parse_perturbation(const std::string& name, const std::string& flag) {
  std::string known;
  for (const PerturbationInfo& i : perturbations()) {
    if (name == i.name) return i.perturbation;
    known += (known.empty() ? "" : ", ") + std::string(i.name);
  }
  throw std::invalid_argument(flag + ": unknown perturbation '" + name + "' (perturbations: " + known + ")");
}

namespace {

/// `text` with each target word (perturb.h's rule) changed with probability o.rate by the edit
/// `kind(d)` names: the one walk behind perturb and misspell.
template <typename Kind>
PerturbedText edit_words(const std::string& text, const PerturbOptions& o, Draws& d, const Kind& kind) {
  PerturbedText out;
  out.text.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    if (!is_letter(text[i])) {
      out.text += text[i++];
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && is_letter(text[j])) ++j;
    // A run of ASCII letters inside a longer word (e.g. "café"'s "caf") is not a word of its own.
    const bool whole =
        (j >= text.size() || static_cast<unsigned char>(text[j]) < 0x80) && (i == 0 || static_cast<unsigned char>(text[i - 1]) < 0x80);
    std::string word = text.substr(i, j - i);
    bool target = whole && word.size() >= 4;
    if (target && !o.words.empty()) {
      std::string lower = word;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      target = o.words.count(lower) > 0;
    }
    if (target) {
      ++out.targets;
      if (d.uniform() < o.rate) {
        std::string edited = edit(word, kind(d), d);
        out.changed += edited != word;
        word = std::move(edited);
      }
    }
    out.text += word;
    i = j;
  }
  return out;
}

std::uint64_t seed_of(const PerturbOptions& o, std::uint64_t row, std::uint64_t salt) {
  return o.seed * 0x100000001B3ull ^ (row << 8) ^ salt;
}

}  // namespace

PerturbedText perturb(const std::string& text, Perturbation p, const PerturbOptions& o, std::uint64_t row) {
  Draws d(seed_of(o, row, static_cast<std::uint64_t>(p)));
  return edit_words(text, o, d, [p](Draws&) { return p; });
}

PerturbedText misspell(const std::string& text, const std::vector<Perturbation>& kinds, const PerturbOptions& o, std::uint64_t row) {
  if (kinds.empty()) throw std::invalid_argument("misspell: no kind of edit given");
  Draws d(seed_of(o, row, 0xFFull));  // a salt no single perturbation has
  return edit_words(text, o, d, [&kinds](Draws& draws) { return kinds[draws.below(kinds.size())]; });
}

}  // namespace attn::text
