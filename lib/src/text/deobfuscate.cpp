#include "attn/text/deobfuscate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "attn/text/subwords.h"

namespace attn::text {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter_or_digit(char c) { return is_letter(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The code point of the UTF-8 sequence at s[i] and its length (a byte that starts none: itself, 1).
std::pair<std::uint32_t, std::size_t> decode(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (n == 1 || i + n > s.size()) return {c, 1};
  std::uint32_t cp = n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return {cp, n};
}

bool invisible(std::uint32_t cp) { return cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF || cp == 0xAD; }

/// Cyrillic and Greek letters and the Latin letters they look like.
constexpr std::pair<std::uint32_t, char> kLookAlikes[] = {
    {0x0430, 'a'}, {0x0441, 'c'}, {0x0435, 'e'}, {0x0456, 'i'}, {0x0458, 'j'}, {0x043E, 'o'}, {0x0440, 'p'}, {0x0455, 's'},
    {0x0445, 'x'}, {0x0443, 'y'}, {0x0410, 'A'}, {0x0412, 'B'}, {0x0421, 'C'}, {0x0415, 'E'}, {0x041D, 'H'}, {0x0406, 'I'},
    {0x041A, 'K'}, {0x041C, 'M'}, {0x041E, 'O'}, {0x0420, 'P'}, {0x0405, 'S'}, {0x0422, 'T'}, {0x0425, 'X'}, {0x03BF, 'o'},
    {0x03B1, 'a'}, {0x0391, 'A'}, {0x0392, 'B'}, {0x0395, 'E'}, {0x0397, 'H'}, {0x0399, 'I'}, {0x039A, 'K'}, {0x039C, 'M'},
    {0x039D, 'N'}, {0x039F, 'O'}, {0x03A1, 'P'}, {0x03A4, 'T'}, {0x03A7, 'X'}, {0x0396, 'Z'}};

/// The Latin letter a Cyrillic or Greek letter looks like, or 0.
char latin_look_alike(std::uint32_t cp) {
  if (cp < 0x0391) return 0;
  for (const auto& [from, to] : kLookAlikes)
    if (from == cp) return to;
  return 0;
}

char leet_letter(char c) {
  switch (c) {
    case '4':
    case '@':
      return 'a';
    case '3':
      return 'e';
    case '1':
      return 'i';
    case '0':
      return 'o';
    case '5':
    case '$':
      return 's';
    case '7':
      return 't';
    case '8':
      return 'b';
    case '9':
      return 'g';
    default:
      return 0;
  }
}

/// A word (no white space) without its invisible characters and, when it has a Latin letter, with
/// its look-alikes read as Latin.
std::string fold(std::string_view word) {
  bool latin = false;
  for (const char c : word) latin = latin || is_letter(c);
  std::string out;
  for (std::size_t i = 0; i < word.size();) {
    const auto [cp, n] = decode(word, i);
    const char look = latin ? latin_look_alike(cp) : 0;
    if (look)
      out += look;
    else if (!invisible(cp))
      out.append(word.substr(i, n));
    i += n;
  }
  return out;
}

/// The letters of `w` from `from` on.
std::string_view letters_from(const std::string& w, std::size_t from) {
  std::size_t end = from;
  while (end < w.size() && is_letter(w[end])) ++end;
  return std::string_view(w).substr(from, end - from);
}

/// The letters at the end of `s`.
std::size_t letters_before(const std::string& s) {
  std::size_t n = 0;
  while (n < s.size() && is_letter(s[s.size() - 1 - n])) ++n;
  return n;
}

/// Whether letters after a leading digit are an ordinal's suffix (1st, 2nd, 3rd, 4th).
bool ordinal(std::string_view rest) { return rest == "st" || rest == "nd" || rest == "rd" || rest == "th"; }

/// A word's inner marks dropped (a '*' kept when `keep_stars`), its leetspeak read and its letter
/// runs of three or more cut to one.
std::string repair(const std::string& w, bool keep_stars = false) {
  std::string out;
  const std::size_t n = w.size();
  const bool marks_dropped = w.find("://") == std::string::npos && w.find("www.") == std::string::npos && w.find('@') == std::string::npos;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = w[i];
    // '.', '_', '*' (one or two) between letters, not in an abbreviation (e.g., U.S.) nor a sentence
    // run on (end.Next), nor in a web address (not_marked)
    if ((c == '.' || c == '_' || (c == '*' && !keep_stars)) && marks_dropped && !out.empty() && is_letter(out.back())) {
      std::size_t j = i;
      while (j < n && j - i < 2 && w[j] == c) ++j;
      const std::size_t before = letters_before(out), after = letters_from(w, j).size();
      const bool sentence = c == '.' && out.back() >= 'a' && out.back() <= 'z' && j < n && w[j] >= 'A' && w[j] <= 'Z';
      if (j < n && is_letter(w[j]) && (before >= 2 || after >= 2) && !sentence) {
        i = j - 1;
        continue;
      }
    }
    const char leet = leet_letter(c);
    if (leet) {
      const bool after_letter = !out.empty() && is_letter(out.back());
      const bool before_letter = i + 1 < n && is_letter(w[i + 1]);
      const bool at_start = out.empty() || !is_letter_or_digit(out.back());
      const bool leads = at_start && c != '@' && letters_from(w, i + 1).size() >= 2 && !ordinal(letters_from(w, i + 1));
      if ((after_letter && before_letter) || leads) {
        out += leet;
        continue;
      }
    }
    out += c;
  }
  // Runs of three or more of one letter (any case) cut to one.
  std::string cut;
  for (std::size_t i = 0; i < out.size();) {
    std::size_t j = i + 1;
    const auto lower = [](char x) { return static_cast<char>(x >= 'A' && x <= 'Z' ? x - 'A' + 'a' : x); };
    while (is_letter(out[i]) && j < out.size() && lower(out[j]) == lower(out[i])) ++j;
    cut.append(out, i, j - i >= 3 ? 1 : j - i);
    i = j;
  }
  return cut;
}

/// ASCII punctuation: what may stand before or after a word's letters.
bool is_mark(char c) { return c > ' ' && c < 0x7F && !is_letter_or_digit(c); }

/// Where a word's letters are: [begin, end) of the word.
struct Letters {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

/// The letters of `w` when `w` is ASCII letters (or the characters `fits` takes) with punctuation
/// before them (when `lead`) and after them (when `trail`); nothing when it is not that.
std::optional<Letters> letters_of(std::string_view w, bool lead, bool trail, bool (*fits)(char) = is_letter) {
  std::size_t i = 0;
  while (lead && i < w.size() && is_mark(w[i])) ++i;
  std::size_t j = i;
  while (j < w.size() && fits(w[j])) ++j;
  std::size_t k = j;
  while (trail && k < w.size() && is_mark(w[k])) ++k;
  if (j == i || k != w.size()) return std::nullopt;
  return Letters{i, j};
}

/// The position of the one letter of `w` when `w` is one letter as letters_of reads it, else npos.
std::size_t lone_letter(const std::string& w, bool lead, bool trail) {
  const std::optional<Letters> l = letters_of(w, lead, trail);
  return l && l->size() == 1 ? l->begin : std::string::npos;
}

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// Letters `l` of `w`, lowercase.
std::string lowered(std::string_view w, const Letters& l) { return lowered(w.substr(l.begin, l.size())); }

/// Where to cut `letters` into known words: the fewest pieces, then the smallest sum of their
/// log ranks (the likeliest words); pieces of three letters or more, or "a" or "i" (the short words
/// a vocabulary holds are mostly pieces of others: "es", "tr", "us" in "estrus"). Empty when there is no
/// such cut; else the pieces' ends.
std::vector<std::size_t> cut_into_known(const std::string& letters, const KnownWords& known) {
  constexpr std::size_t kLongest = 24;  // letters of the longest piece tried
  const std::string lower = lowered(letters);
  const std::size_t n = lower.size();
  struct Best {
    std::size_t pieces = 0;
    double cost = 0;
    std::size_t from = 0;
    bool reached = false;
  };
  std::vector<Best> best(n + 1);
  best[0].reached = true;
  for (std::size_t end = 1; end <= n; ++end) {
    for (std::size_t len = 1; len <= std::min(end, kLongest); ++len) {
      const Best& before = best[end - len];
      if (!before.reached) continue;
      const std::string_view piece = std::string_view(lower).substr(end - len, len);
      if (len < 3 && piece != "a" && piece != "i") continue;
      const std::optional<std::int32_t> rank = known.rank(piece);
      if (!rank) continue;
      const Best candidate{before.pieces + 1, before.cost + std::log(static_cast<double>(std::max(1, *rank))), end - len, true};
      Best& b = best[end];
      if (!b.reached || candidate.pieces < b.pieces || (candidate.pieces == b.pieces && candidate.cost < b.cost)) b = candidate;
    }
  }
  if (!best[n].reached) return {};
  std::vector<std::size_t> ends;
  for (std::size_t at = n; at > 0; at = best[at].from) ends.insert(ends.begin(), at);
  return ends;
}

/// Whether two pieces of letters (lowercase) read as one word: their join is a known word, and one
/// piece is not or the join is more frequent than both ("stu pid", "r oom", "st ill" -> still;
/// "a live", "th is" stay).
bool joins(const std::string& a, const std::string& b, const KnownWords& known) {
  const std::optional<std::int32_t> whole = known.rank(a + b);
  if (!whole) return false;
  const std::optional<std::int32_t> ra = known.rank(a), rb = known.rank(b);
  return !ra || !rb || (*whole < *ra && *whole < *rb);
}

/// `w` without the one or two '-' between its two runs of letters when the runs join (st-upid).
void join_hyphen(std::string& w, const KnownWords& known) {
  const std::size_t hyphen = w.find('-');
  if (hyphen == std::string::npos) return;
  const std::size_t after = hyphen + (hyphen + 1 < w.size() && w[hyphen + 1] == '-' ? 2 : 1);
  const std::string_view before_it = std::string_view(w).substr(0, hyphen), after_it = std::string_view(w).substr(after);
  const std::optional<Letters> a = letters_of(before_it, true, false), b = letters_of(after_it, false, true);
  if (a && b && joins(lowered(before_it, *a), lowered(after_it, *b), known)) w.erase(hyphen, after - hyphen);
}

/// A word of three letters or more written without vowels after its first letter (with punctuation
/// around it kept) read as the most frequent known word with that consonant skeleton, when the word is
/// unknown ("stpd") or ranked at least ten times further down: in HateXplain's vocabulary "btch" (8,381)
/// is read as "bitch" (62), while "gym" (2,621) stays beside "goyim" (996): a word people write so is
/// its own word unless far rarer.
void read_skeleton(std::string& w, const KnownWords& known) {
  constexpr std::int32_t kRarer = 10;
  const std::optional<Letters> l = letters_of(w, true, true);
  if (!l || l->size() < 3) return;
  if (has_vowel_after_first(std::string_view(w).substr(l->begin, l->size()))) return;
  const std::string core = lowered(w, *l);
  const std::optional<std::string_view> top = known.with_skeleton(core);
  if (!top || *top == core) return;
  const std::optional<std::int32_t> own = known.rank(core), top_rank = known.rank(*top);
  if (own && (!top_rank || *own / kRarer < *top_rank)) return;  // own >= 10 x top_rank reads (ranks are 1 or more; no overflow)
  w.replace(l->begin, l->size(), *top);
}

/// An unknown word that is a known word of four letters or more with one or two letters or digits
/// after it (with punctuation around it kept; no '@' or '#' in it: mentions, hashtags) read as that
/// word, one character off tried first ("stupidzq", "Idiot7" -> stupid, Idiot); not a word with no
/// vowel after its first letter that read_skeleton reads whole ("instd" is "instead", not "inst").
void drop_suffix(std::string& w, const KnownWords& known) {
  constexpr std::size_t kShortestStem = 4, kMostAdded = 2;
  if (w.find_first_of("@#") != std::string::npos) return;
  const std::optional<Letters> l = letters_of(w, true, true, is_letter_or_digit);
  if (!l || l->size() <= kShortestStem) return;
  const std::string core = lowered(w, *l);
  if (known.rank(core)) return;
  for (std::size_t cut = 1; cut <= kMostAdded && core.size() - cut >= kShortestStem; ++cut) {
    const std::string_view stem = std::string_view(core).substr(0, core.size() - cut);
    if (std::all_of(stem.begin(), stem.end(), is_letter) && known.rank(stem)) {
      if (!has_vowel_after_first(core) && known.with_skeleton(core)) return;  // read_skeleton's: instd is instead, not inst
      w.erase(l->begin + stem.size(), cut);
      return;
    }
  }
}

/// A '*' between two letters of a word read as the letter that makes it the most frequent known
/// word (st*pid -> stupid), when one does.
void fill_mask(std::string& w, const KnownWords& known) {
  const std::size_t star = w.find('*');
  if (star == std::string::npos || star == 0 || star + 1 >= w.size() || !is_letter(w[star - 1]) || !is_letter(w[star + 1])) return;
  std::size_t i = star, j = star + 1;
  while (i > 0 && is_letter(w[i - 1])) --i;
  while (j < w.size() && is_letter(w[j])) ++j;
  std::string word = lowered(std::string_view(w).substr(i, j - i));
  std::optional<std::int32_t> best;
  char letter = 0;
  for (char c = 'a'; c <= 'z'; ++c) {
    word[star - i] = c;
    const std::optional<std::int32_t> rank = known.rank(word);
    if (rank && (!best || *rank < *best)) {
      best = rank;
      letter = c;
    }
  }
  if (best) w[star] = letter;
}

/// Where the run of single letters one space apart that starts at words[w] ends (w itself when
/// none starts there): its first letter may have punctuation before it, its last after it.
std::size_t run_end(const std::vector<std::string>& words, const std::vector<std::string>& gaps, std::size_t w) {
  if (lone_letter(words[w], true, false) == std::string::npos) return w;
  std::size_t end = w + 1;
  while (end < words.size() && gaps[end] == " " && lone_letter(words[end], false, false) != std::string::npos) ++end;
  if (end < words.size() && gaps[end] == " " && lone_letter(words[end], false, true) != std::string::npos) ++end;
  return end;
}

/// A run of single letters read as words: cut into known words (with a vocabulary), else joined,
/// a first "a" or "I" kept apart when three letters or more follow ("what a s t u p i d post").
std::string read_run(const std::string& letters, const KnownWords* known) {
  const std::vector<std::size_t> ends = known ? cut_into_known(letters, *known) : std::vector<std::size_t>();
  std::string out;
  std::size_t from = 0;
  for (const std::size_t to : ends) {
    if (from > 0) out += ' ';
    out.append(letters, from, to - from);
    from = to;
  }
  if (!ends.empty()) return out;
  if (letters.size() >= 4 && (letters[0] == 'a' || letters[0] == 'A' || letters[0] == 'I'))
    return letters.substr(0, 1) + " " + letters.substr(1);
  return letters;
}

}  // namespace

std::string deobfuscate(std::string_view text, const KnownWords* known) {
  // The text as words and the white space between them (gaps[k] before words[k]), each word
  // folded and repaired.
  std::vector<std::string> words, gaps(1);
  for (std::size_t i = 0; i < text.size();) {
    if (is_space(text[i])) {
      gaps.back() += text[i++];
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    std::string word = repair(fold(text.substr(i, j - i)), known != nullptr);
    if (known && word.find('*') != std::string::npos) {  // a '*' filled once the rest of the word is read
      fill_mask(word, *known);
      word = repair(word);
    }
    words.push_back(std::move(word));
    if (known) join_hyphen(words.back(), *known);
    gaps.emplace_back();
    i = j;
  }
  std::string out = gaps[0];
  for (std::size_t w = 0; w < words.size();) {
    const std::size_t end = run_end(words, gaps, w);
    if (end - w >= 3) {
      const std::size_t first = lone_letter(words[w], true, false), last = lone_letter(words[end - 1], false, true);
      std::string letters(1, words[w][first]);  // the first letter, the bare ones, the last
      for (std::size_t k = w + 1; k + 1 < end; ++k) letters += words[k][0];
      letters += words[end - 1][last];
      out += words[w].substr(0, first) + read_run(letters, known) + words[end - 1].substr(last + 1) + gaps[end];
      w = end;
      continue;
    }
    // Two words of letters one space apart that read as one word.
    if (known && w + 1 < words.size() && gaps[w + 1] == " ") {
      const std::optional<Letters> a = letters_of(words[w], true, false), b = letters_of(words[w + 1], false, true);
      if (a && b && joins(lowered(words[w], *a), lowered(words[w + 1], *b), *known)) {
        out += words[w] + words[w + 1] + gaps[w + 2];
        w += 2;
        continue;
      }
    }
    if (known) {
      drop_suffix(words[w], *known);  // first: what is left may be written without vowels (btchzq)
      read_skeleton(words[w], *known);
    }
    out += words[w] + gaps[w + 1];
    ++w;
  }
  return out;
}

}  // namespace attn::text
