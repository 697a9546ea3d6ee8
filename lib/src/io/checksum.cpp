#include "attn/io/checksum.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace attn::io {
namespace {

void print_warning(const std::string& message) { std::fprintf(stderr, "warning: %s\n", message.c_str()); }

std::atomic<void (*)(const std::string&)> g_handler{print_warning};

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes) {
  uLong c = crc;
  std::size_t done = 0;
  while (done < bytes.size()) {  // zlib takes at most 4 GB a call
    const auto n = static_cast<uInt>(std::min<std::size_t>(bytes.size() - done, 1u << 30));
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data() + done), n);
    done += n;
  }
  return static_cast<std::uint32_t>(c);
}

std::string checksum_hex(std::uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc));
  return buf;
}

std::string crc32_hex(std::string_view bytes) { return checksum_hex(crc32_update(0, bytes)); }

void warn(const std::string& message) { g_handler.load()(message); }

void set_warning_handler(void (*handler)(const std::string& message)) { g_handler = handler ? handler : print_warning; }

}  // namespace attn::io
