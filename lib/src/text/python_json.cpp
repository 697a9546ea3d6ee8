#include "attn/text/python_json.h"

#include <charconv>
#include <cstdint>

namespace attn::text::pyjson {
namespace {

void append_u_escape(std::string& out, std::uint32_t unit) {
  static const char* kHex = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xF];
}

/// Printable ASCII other than '"' and '\\': written as it is.
bool plain(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

}  // namespace

void append_string(std::string& out, std::string_view s) {
  out += '"';
  append_escaped(out, s);
  out += '"';
}

namespace {

/// One ASCII character that is not plain: a short escape, else \u00XX.
void append_ascii_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    default:
      append_u_escape(out, c);
  }
}

/// The UTF-8 sequence at p[i] as \uXXXX (a surrogate pair above U+FFFF); its length. The input is
/// validated upstream; a truncated sequence stops at the end safely.
std::size_t append_utf8_escape(std::string& out, const unsigned char* p, std::size_t i, std::size_t n) {
  const unsigned char c = p[i];
  std::uint32_t cp = (c >> 5) == 0x6 ? c & 0x1F : (c >> 4) == 0xE ? c & 0x0F : c & 0x07;
  std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
  if (i + len > n) len = n - i;
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
  if (cp >= 0x10000) {
    const std::uint32_t v = cp - 0x10000;
    append_u_escape(out, 0xD800 + (v >> 10));
    append_u_escape(out, 0xDC00 + (v & 0x3FF));
  } else {
    append_u_escape(out, cp);
  }
  return len;
}

}  // namespace

void append_escaped(std::string& out, std::string_view s, NonAscii non_ascii) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  const bool as_is = non_ascii == NonAscii::kAsIs;
  for (std::size_t i = 0; i < n;) {
    std::size_t run = i;  // what is written as it is, copied a run at a time
    while (run < n && (plain(p[run]) || (as_is && p[run] >= 0x7F))) ++run;
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
    } else if (p[i] < 0x80) {
      append_ascii_escape(out, p[i++]);
    } else {
      i += append_utf8_escape(out, p, i, n);
    }
  }
}

void NestedDictWriter::string_value(std::string_view s) {
  out_ += "\\\"";
  bool all_plain = true;
  for (const char c : s) all_plain = all_plain && plain(static_cast<unsigned char>(c));
  if (all_plain) {
    out_ += s;
  } else {
    scratch_.clear();
    append_escaped(scratch_, s);     // the inner JSON string's body ...
    append_escaped(out_, scratch_);  // ... inside the outer one
  }
  out_ += "\\\"";
}

void NestedDictWriter::number(long long v) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
  out_.append(digits, static_cast<std::size_t>(end - digits));
}

}  // namespace attn::text::pyjson
