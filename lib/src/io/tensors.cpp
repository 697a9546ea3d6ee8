#include "attn/io/tensors.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <caffe2/serialize/inline_container.h>
#include <torch/script.h>

#include "attn/io/checksum.h"
#include "attn/io/code_check.h"
#include "attn/io/pickle_check.h"
#include "attn/io/zip_records.h"

namespace attn::io {

std::string tensor_checksum(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().cpu().contiguous();
  std::string header = c10::toString(c.scalar_type());
  for (const auto d : c.sizes()) header += ":" + std::to_string(d);
  const std::uint32_t crc = crc32_update(0, header);
  return checksum_hex(crc32_update(crc, std::string_view(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size())));
}

void require_in_storage(const torch::Tensor& t, const std::string& what, const std::string& name) {
  if (!t.defined() || t.numel() == 0) return;
  const auto bad = [&](const std::string& why) {
    throw std::runtime_error(what + ": tensor '" + name + "' " + why + ": the file is corrupt");
  };
  if (!t.has_storage()) bad("has no storage");
  if (t.storage_offset() < 0) bad("has a negative offset");
  // The last element addressed: offset + sum((size - 1) * stride), with strides >= 0.
  std::uint64_t last = static_cast<std::uint64_t>(t.storage_offset());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) bad("has a negative stride");
    const auto step = static_cast<std::uint64_t>(t.size(d) - 1);
    const auto stride = static_cast<std::uint64_t>(t.stride(d));
    if (stride != 0 && step > (UINT64_MAX / 2 - last) / stride) bad("addresses more elements than exist");
    last += step * stride;
  }
  const auto item = static_cast<std::uint64_t>(t.element_size());
  if (last >= UINT64_MAX / item || (last + 1) * item > t.storage().nbytes())
    bad("has shape " + c10::str(t.sizes()) + " but " + std::to_string(t.storage().nbytes()) + " bytes of data");
}

namespace {

/// A record's name within the archive, without the archive's top folder ("archive/data/0" is "data/0"),
/// as LibTorch's reader names them.
std::string in_archive(const std::string& name) { return name.substr(name.find('/') + 1); }

/// Checks every pickle (data, constants, the code's debug info) and the records its tensor storages
/// are read from: LibTorch's unpickler gives a storage the size its pickle states over the bytes of
/// its record, so a record stated shorter in the ZIP directory would be read past its end.
/// `sizes`: the records' stated sizes by name (check_zip_sizes).
void check_pickles(caffe2::serialize::PyTorchStreamReader& reader, const std::string& what,
                   const std::map<std::string, std::uint64_t>& sizes) {
  for (const std::string& record : reader.getAllRecords()) {
    if (record.size() < 3 || record.compare(record.size() - 3, 3, "pkl") != 0) continue;
    auto [data, size] = reader.getRecord(record);
    const std::vector<PickledStorage> storages =
        check_pickle(std::string_view(static_cast<const char*>(data.get()), size), what + ": " + record);
    for (const PickledStorage& storage : storages) {
      // A storage's bytes are the record "<pickle's name without .pkl>/<key>".
      const std::string name = record.substr(0, record.size() - std::min<std::size_t>(record.size(), 4)) + "/" + storage.key;
      const auto stated = sizes.find(name);
      if (record.size() < 4 || record.compare(record.size() - 4, 4, ".pkl") != 0 || stated == sizes.end())
        throw std::runtime_error(what + ": " + record + " names a tensor storage '" + storage.key +
                                 "' the file does not hold: the file is corrupt");
      if (stated->second != storage.bytes)
        throw std::runtime_error(what + ": record '" + name + "' holds " + std::to_string(stated->second) + " bytes where " + record +
                                 " states " + std::to_string(storage.bytes) + " (" + std::to_string(storage.numel) + " of " + storage.type +
                                 "): the file is corrupt");
    }
  }
}

/// The TorchScript code a module file carries (code/*.py): what LibTorch compiles as it loads.
void check_code(caffe2::serialize::PyTorchStreamReader& reader, const std::string& what) {
  for (const std::string& record : reader.getAllRecords()) {
    if (record.rfind("code/", 0) != 0 || record.size() < 3 || record.compare(record.size() - 3, 3, ".py") != 0) continue;
    auto [data, size] = reader.getRecord(record);
    check_torchscript_code(std::string_view(static_cast<const char*>(data.get()), size), what + ": " + record);
  }
}

/// Runs `check` on LibTorch's reader of the archive; the reader's own errors become "not EXPECTED".
template <typename Source, typename Check>
void check_archive_from(Source source, const std::string& what, const std::string& expected, const Check& check) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(source);
    check(reader, what);
  } catch (const c10::Error& e) {
    throw std::runtime_error(what + ": not " + expected + " (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(what + ": not " + expected + " (a record claims more memory than there is)");
  }
}

/// Records whose bytes only LibTorch's parsers vouch for: the code, the pickles, the version.
/// Tensor data (data/N) and extra files are covered by attn's own checksums, which name the
/// tensor or file (models/saved_model.h).
bool parsed_record(const std::string& name) {
  const std::string rest = in_archive(name);
  return rest.rfind("data/", 0) != 0 && rest.rfind("extra/", 0) != 0;
}

/// The stated sizes of all records (LibTorch's reader allocates a record's stated size before
/// reading it), before LibTorch opens the file, by their names in the archive; a file with no ZIP
/// directory is "WHAT: not EXPECTED (...)", as LibTorch's reader would say.
std::map<std::string, std::uint64_t> check_record_sizes(const ReadAt& read, std::uint64_t size, const std::string& what,
                                                        const std::string& expected) {
  std::map<std::string, std::uint64_t> sizes;
  try {
    for (const auto& [name, stated] : check_zip_sizes(read, size, what, [](const std::string&) { return true; }))
      sizes[in_archive(name)] = stated;
  } catch (const NotZipArchive& e) {
    throw std::runtime_error(what + ": not " + expected + " (" + e.reason + ")");
  }
  return sizes;
}

}  // namespace

void check_archive(const std::string& path, const std::string& expected) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!in || ec) throw std::runtime_error(path + ": cannot open");
  const ReadAt read = [&](std::uint64_t offset, char* out, std::size_t n) -> std::size_t {
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(out, static_cast<std::streamsize>(n));
    return static_cast<std::size_t>(in.gcount());
  };
  const auto sizes = check_record_sizes(read, size, path, expected);
  check_archive_from<const std::string&>(path, path, expected,
                                         [&](auto& reader, const std::string& what) { check_pickles(reader, what, sizes); });
  check_zip_records(read, size, path, parsed_record);
  check_archive_from<const std::string&>(path, path, expected, check_code);  // the code, once its CRC-32 is right
}

void check_archive_bytes(const std::string& bytes, const std::string& what, const std::string& expected) {
  const ReadAt read = [&](std::uint64_t offset, char* out, std::size_t n) -> std::size_t {
    if (offset >= bytes.size()) return 0;
    return bytes.copy(out, n, static_cast<std::size_t>(offset));
  };
  const auto sizes = check_record_sizes(read, bytes.size(), what, expected);
  std::istringstream in(bytes);  // LibTorch's stream reader checks every read against the size
  check_archive_from<std::istream*>(&in, what, expected, [&](auto& reader, const std::string& w) { check_pickles(reader, w, sizes); });
  check_zip_records(read, bytes.size(), what, parsed_record);
  std::istringstream again(bytes);
  check_archive_from<std::istream*>(&again, what, expected, check_code);
}

}  // namespace attn::io
