#include "attn/text/unicode.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>

namespace attn::text {

std::size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlongs
      if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlongs
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return std::string_view::npos;
}

bool is_ascii(std::string_view s) {
  unsigned char any = 0;
  for (unsigned char c : s) any |= c;  // no early exit: vectorises, and most texts are short
  return any < 0x80;
}

namespace {

void ascii_lower_append(std::string_view s, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + s.size());
  char* dst = out.data() + start;
  const char* src = s.data();
  for (std::size_t i = 0; i < s.size(); ++i) {  // branch-free, so the compiler vectorises it
    const auto c = static_cast<unsigned char>(src[i]);
    dst[i] = static_cast<char>(c + ((static_cast<unsigned char>(c - 'A') < 26) << 5));
  }
}

void icu_lower_append(std::string_view s, std::string& out) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  u.toLower(icu::Locale::getRoot());
  u.toUTF8String(out);
}

/// ASCII whitespace is neither cased nor case-ignorable, so no lowercase context (Final_Sigma is
/// the only one in the root locale) reaches across it: runs between whitespace lower independently.
bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

namespace {

/// python_lower_append's work, with `lower_run` lowering each run (between ASCII whitespace) that
/// holds a non-ASCII byte; ASCII stretches are lowered byte-wise.
template <class LowerRun>
void lower_runs(std::string_view s, std::string& out, LowerRun&& lower_run) {
  if (is_ascii(s)) return ascii_lower_append(s, out);
  const std::size_t n = s.size();
  std::size_t done = 0;  // s[0, done) is appended
  std::size_t i = 0;
  while (i < n) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t begin = i;
    while (begin > done && !is_ascii_space(s[begin - 1])) --begin;
    std::size_t end = i;
    while (end < n && !is_ascii_space(s[end])) ++end;
    ascii_lower_append(s.substr(done, begin - done), out);
    lower_run(s.substr(begin, end - begin), out);
    done = i = end;
  }
  ascii_lower_append(s.substr(done), out);
}

}  // namespace

void python_lower_append(std::string_view s, std::string& out) { lower_runs(s, out, icu_lower_append); }

std::string python_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  python_lower_append(s, out);
  return out;
}

}  // namespace attn::text
