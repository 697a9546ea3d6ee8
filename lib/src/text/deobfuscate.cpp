#include "attn/text/deobfuscate.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace attn::text {
namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
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

/// A word's inner marks dropped, its leetspeak read and its letter runs of three or more cut to one.
std::string repair(const std::string& w) {
  std::string out;
  const std::size_t n = w.size();
  const bool marks_dropped = w.find("://") == std::string::npos && w.find("www.") == std::string::npos && w.find('@') == std::string::npos;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = w[i];
    // '.', '_', '*' (one or two) between letters, not in an abbreviation (e.g., U.S.) nor a sentence
    // run on (end.Next), nor in a web address (not_marked)
    if ((c == '.' || c == '_' || c == '*') && marks_dropped && !out.empty() && is_letter(out.back())) {
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
      const bool at_start = out.empty() || !(is_letter(out.back()) || (out.back() >= '0' && out.back() <= '9'));
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

}  // namespace

std::string deobfuscate(std::string_view text) {
  // The text as words and the white space between them, each word folded and repaired.
  std::vector<std::string> words, gaps(1);
  for (std::size_t i = 0; i < text.size();) {
    if (is_space(text[i])) {
      gaps.back() += text[i++];
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    words.push_back(repair(fold(text.substr(i, j - i))));
    gaps.emplace_back();
    i = j;
  }
  // Three or more single letters one space apart: one word. A run's first letter "a" or "I" is the
  // word before it when the rest are three or more ("what a s t u p i d post").
  std::string out = gaps[0];
  const auto single = [&](std::size_t k) { return words[k].size() == 1 && is_letter(words[k][0]); };
  for (std::size_t w = 0; w < words.size();) {
    std::size_t end = w;
    while (end < words.size() && single(end) && (end == w || gaps[end] == " ")) ++end;
    const bool article = end - w >= 4 && (words[w] == "a" || words[w] == "I" || words[w] == "A");
    if (article) {
      out += words[w] + gaps[w + 1];
      ++w;
    }
    if (end - w >= 3) {
      for (std::size_t k = w; k < end; ++k) out += words[k];
      out += gaps[end];
      w = end;
    } else if (w < words.size() && !article) {
      out += words[w] + gaps[w + 1];
      ++w;
    }
  }
  return out;
}

}  // namespace attn::text
