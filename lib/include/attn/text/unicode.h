#pragma once
/// UTF-8 helpers with Python 3 `str` semantics (a string is a sequence of code points).
#include <cstddef>
#include <string>
#include <string_view>

namespace attn::text {

/// Offset of the first byte that is not part of valid UTF-8 (RFC 3629: no overlongs, no surrogates,
/// nothing above U+10FFFF), or std::string_view::npos when `s` is valid.
std::size_t find_invalid_utf8(std::string_view s);

/// True when every byte is below 0x80.
bool is_ascii(std::string_view s);

/// Python's `str.lower()`: the full Unicode lowercase mapping with the Final_Sigma context
/// (U+0130 -> "i\u0307", word-final capital sigma -> U+03C2). ASCII input takes a byte-wise path;
/// anything else goes through ICU's root-locale toLower, which implements the same mapping.
/// `s` must be valid UTF-8.
std::string python_lower(std::string_view s);

/// Appends python_lower(s) to `out` (reuses out's capacity; the hot path of tokenisation).
void python_lower_append(std::string_view s, std::string& out);

/// Length in bytes of the UTF-8 sequence that starts with byte `lead` (1 for continuation bytes).
inline std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

}  // namespace attn::text
