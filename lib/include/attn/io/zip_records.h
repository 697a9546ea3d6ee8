#pragma once
/// The CRC-32 that a ZIP archive (LibTorch's .pt files are ZIP archives: tensors stored, the
/// TorchScript code deflated) records for each of its files. LibTorch's reader is built without checking them, so a
/// flipped bit in a model's TorchScript code or pickles would reach its parsers; attn checks
/// them first.
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attn::io {

/// Random access to an archive's bytes: reads up to `n` bytes at `offset` into `out`, returns
/// how many it read (fewer only at the end).
using ReadAt = std::function<std::size_t(std::uint64_t offset, char* out, std::size_t n)>;

/// The archive has no ZIP directory at all: "WHAT: not a ZIP archive (...)". Callers that expect a
/// kind of file (a model, a checkpoint) name it.
struct NotZipArchive : std::runtime_error {
  NotZipArchive(const std::string& what, const std::string& why)
      : std::runtime_error(what + ": not a ZIP archive (" + why + ")"), reason("not a ZIP archive: " + why) {}
  std::string reason;  ///< without the file's name: "not a ZIP archive: WHY"
};

/// Checks only the stated sizes of the records `wanted` names, reading none of their bytes: each
/// lies within the file, a stored record's sizes agree, a deflated one states no more than DEFLATE
/// can expand to. Run before LibTorch reads a record, as its reader allocates the stated size
/// first. Throws as check_zip_records does ("WHAT: record 'NAME': corrupt sizes", "... lies
/// outside the file ..."). Returns each checked record's (uncompressed) size by its name.
std::map<std::string, std::uint64_t> check_zip_sizes(const ReadAt& read, std::uint64_t size, const std::string& what,
                                                     const std::function<bool(const std::string& name)>& wanted);

/// Verifies the CRC-32 of every record (stored or deflated; another method is an error: LibTorch
/// writes none and reads none) of the ZIP archive of `size` bytes for which `wanted(name)` is true. Throws
/// std::runtime_error "WHAT: record 'NAME' ..." for a mismatch or a directory entry that points
/// outside the archive, NotZipArchive when the directory cannot be found. Handles
/// ZIP64 (archives over 4 GiB).
void check_zip_records(const ReadAt& read, std::uint64_t size, const std::string& what,
                       const std::function<bool(const std::string& name)>& wanted);

}  // namespace attn::io
