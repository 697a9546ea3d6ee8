#pragma once
// What the fuzz targets share: the bytes as a file (the readers under test open paths).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fuzz {

/// Writes the input to a per-process temporary file and returns its path.
inline std::string as_file(const std::uint8_t* data, std::size_t size, const char* suffix) {
  const std::string path = "/tmp/attn-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace fuzz
