#pragma once
// What the fuzz targets share: the bytes as a file (the readers under test open paths).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fuzz {

/// Writes the input to a per-process temporary file in $TMPDIR (else /tmp) and returns its path.
/// scripts/fuzz.sh points TMPDIR at a directory it removes: the file of a run that libFuzzer ends
/// at its time limit is not left behind.
inline std::string as_file(const std::uint8_t* data, std::size_t size, const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/attn-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace fuzz
