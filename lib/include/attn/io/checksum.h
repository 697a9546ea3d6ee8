#pragma once
/// Checksums that catch corrupt files (a flipped bit, a truncated copy): CRC-32 (zlib's, as in
/// ZIP and gzip) as 8 hex digits. Not a signature: they do not protect against someone who edits a
/// file on purpose (docs/reliability.md, "Trust").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attn::io {

/// CRC-32 of `bytes`, continuing `crc` (0 to start).
std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes);
/// 8 hex digits.
std::string checksum_hex(std::uint32_t crc);
/// checksum_hex(crc32_update(0, bytes)).
std::string crc32_hex(std::string_view bytes);

/// A warning for the user (e.g. a file without checksums): by default "warning: ..." on stderr;
/// a program may route it elsewhere.
void warn(const std::string& message);
void set_warning_handler(void (*handler)(const std::string& message));

}  // namespace attn::io
