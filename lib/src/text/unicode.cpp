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
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

namespace {

void ascii_lower_append(std::string_view s, std::string& out) {
  const std::size_t start = out.size();
  out.append(s);
  for (std::size_t i = start; i < out.size(); ++i) {
    const char c = out[i];
    if (c >= 'A' && c <= 'Z') out[i] = static_cast<char>(c + ('a' - 'A'));
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

void python_lower_append(std::string_view s, std::string& out) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    // One run: [i, j) without whitespace, then the whitespace after it.
    bool ascii = true;
    std::size_t j = i;
    while (j < n && !is_ascii_space(s[j])) ascii &= static_cast<unsigned char>(s[j++]) < 0x80;
    while (j < n && is_ascii_space(s[j])) ++j;
    if (ascii)
      ascii_lower_append(s.substr(i, j - i), out);
    else
      icu_lower_append(s.substr(i, j - i), out);
    i = j;
  }
}

std::string python_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  python_lower_append(s, out);
  return out;
}

}  // namespace attn::text
