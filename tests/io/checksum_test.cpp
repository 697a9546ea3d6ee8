// Checksums that catch corrupt files: zlib's CRC-32 as 8 hex digits, and where warnings go.
#include <string>

#include <catch2/catch.hpp>

#include "attn/io/checksum.h"

using namespace attn;

namespace {
std::string g_checksum_warning;
void keep_checksum_warning(const std::string& message) { g_checksum_warning = message; }
}  // namespace

TEST_CASE("CRC-32: zlib's check values, continued in pieces, a flipped bit seen", "[io][checksum]") {
  CHECK(io::crc32_hex("123456789") == "cbf43926");  // the CRC-32 check value (ZIP, gzip, PNG)
  CHECK(io::crc32_hex("The quick brown fox jumps over the lazy dog") == "414fa339");
  CHECK(io::crc32_hex("") == "00000000");
  CHECK(io::checksum_hex(0x1234) == "00001234");  // always 8 digits
  CHECK(io::crc32_update(io::crc32_update(0, "1234"), "56789") == 0xcbf43926u);
  std::string bytes(4096, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  const std::string good = io::crc32_hex(bytes);
  bytes[1000] = static_cast<char>(bytes[1000] ^ 0x10);
  CHECK(io::crc32_hex(bytes) != good);
  CHECK(io::crc32_hex(bytes.substr(0, 4095)) != good);  // a truncated copy
}

TEST_CASE("warnings go to the handler a program sets, and back to stderr with none", "[io][checksum]") {
  io::set_warning_handler(keep_checksum_warning);
  io::warn("model.pt: carries no checksums");
  CHECK(g_checksum_warning == "model.pt: carries no checksums");
  io::set_warning_handler(nullptr);  // the default again
  g_checksum_warning.clear();
  io::warn("printed on stderr");
  CHECK(g_checksum_warning.empty());
}
