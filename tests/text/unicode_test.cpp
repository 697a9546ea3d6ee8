// UTF-8 with Python 3 str semantics: validation (RFC 3629) and str.lower().
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "attn/text/unicode.h"

TEST_CASE("lowercase is Python's full str.lower", "[unicode]") {
  using attn::text::python_lower;
  CHECK(python_lower("İstanbul") == "i\xCC\x87stanbul");  // i + U+0307
  CHECK(python_lower("ΟΔΥΣΣΕΥΣ") == "οδυσσευς");          // final sigma
  CHECK(python_lower("ΣΑΣ's") == "σασ's");                // not final: a cased letter follows the '
  CHECK(python_lower("Σ") == "σ");
  CHECK(python_lower("ẞ ß") == "ß ß");
  CHECK(python_lower("\u212A\u212B") == "k\u00E5");  // KELVIN, ANGSTROM
  CHECK(python_lower("Ǆ ǅ Ａ ﬁ 😀 ٣") == "ǆ ǆ ａ ﬁ 😀 ٣");
  CHECK(python_lower("ABC def\r") == "abc def\r");
  std::string out = "kept ";  // appending keeps what the buffer holds
  attn::text::python_lower_append("ÉTÉ ΣΑΣ", out);
  CHECK(out == "kept été σας");
}

TEST_CASE("UTF-8 validation", "[unicode]") {
  using attn::text::find_invalid_utf8;
  CHECK(find_invalid_utf8("plain ascii") == std::string_view::npos);
  CHECK(find_invalid_utf8("é中😀") == std::string_view::npos);
  CHECK(find_invalid_utf8("ab\xFF") == 2);
  CHECK(find_invalid_utf8("\xE4\xB8") == 0);          // truncated
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(find_invalid_utf8("ok\xC0\xAF") == 2);        // an overlong '/'
  CHECK(find_invalid_utf8("\xED\xA0\x80") == 0);      // a UTF-16 surrogate
  CHECK(attn::text::is_ascii("plain\t~"));
  CHECK_FALSE(attn::text::is_ascii("caf\xC3\xA9"));
  CHECK(attn::text::utf8_sequence_length(0xC3) == 2);
  CHECK(attn::text::utf8_sequence_length(0xF0) == 4);
}
