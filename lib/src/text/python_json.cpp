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

void append_escaped(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t run = i;  // printable ASCII other than '"' and '\\' is written as it is: copied a run at a time
    while (run < n && plain(p[run])) ++run;
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      continue;
    }
    const unsigned char c = p[i];
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7F)
            append_u_escape(out, c);
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence (input is validated upstream; stop safely on truncation).
    std::uint32_t cp;
    std::size_t len;
    if ((c >> 5) == 0x6) {
      cp = c & 0x1F;
      len = 2;
    } else if ((c >> 4) == 0xE) {
      cp = c & 0x0F;
      len = 3;
    } else {
      cp = c & 0x07;
      len = 4;
    }
    if (i + len > n) len = n - i;
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
    if (cp >= 0x10000) {
      const std::uint32_t v = cp - 0x10000;
      append_u_escape(out, 0xD800 + (v >> 10));
      append_u_escape(out, 0xDC00 + (v & 0x3FF));
    } else {
      append_u_escape(out, cp);
    }
    i += len;
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
