// The CRC-32 check of .pt archives (LibTorch's reader checks none): what attn and LibTorch write
// passes; a changed byte, a cut file, a directory pointing outside the file or a broken signature is
// refused with an error naming the file (and the record).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>
#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data.h"
#include "attn/io/torch_save.h"
#include "attn/io/zip_records.h"

using namespace attn;

namespace {

// ---- Reading and editing the little-endian fields of a ZIP archive (PKWARE's APPNOTE.TXT) ----

std::uint64_t le(const std::string& b, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b.at(at + static_cast<std::size_t>(i)));
  return v;
}

void set_le(std::string& b, std::size_t at, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.at(at + static_cast<std::size_t>(i)) = static_cast<char>((v >> (8 * i)) & 0xFF);
}

void put_le(std::string& b, std::uint64_t v, int bytes) {
  b.append(static_cast<std::size_t>(bytes), '\0');
  set_le(b, b.size() - static_cast<std::size_t>(bytes), v, bytes);
}

/// The end-of-central-directory record (the archives here have no comment: it is the last 22 bytes).
std::size_t eocd_of(const std::string& zip) {
  const std::size_t at = zip.rfind(std::string("PK\x05\x06", 4));
  if (at == std::string::npos) throw std::runtime_error("no end of central directory");
  return at;
}

struct Entry {
  std::string name;
  std::uint64_t method = 0;  ///< 0 stored, 8 deflated
  std::size_t central = 0;   ///< its central directory entry
  std::size_t local = 0;     ///< its local header
  std::size_t data = 0;      ///< its bytes
  std::uint64_t stored = 0;  ///< how many
};

std::vector<Entry> entries_of(const std::string& zip) {
  const std::size_t eocd = eocd_of(zip);
  std::vector<Entry> out;
  std::size_t pos = le(zip, eocd + 16, 4);
  for (std::uint64_t i = 0, n = le(zip, eocd + 10, 2); i < n; ++i) {
    Entry e;
    const std::size_t name_length = le(zip, pos + 28, 2);
    e.name = zip.substr(pos + 46, name_length);
    e.method = le(zip, pos + 10, 2);
    e.central = pos;
    e.local = le(zip, pos + 42, 4);
    e.data = e.local + 30 + le(zip, e.local + 26, 2) + le(zip, e.local + 28, 2);
    e.stored = le(zip, pos + 20, 4);
    out.push_back(e);
    pos += 46 + name_length + le(zip, pos + 30, 2) + le(zip, pos + 32, 2);
  }
  return out;
}

Entry entry(const std::string& zip, const std::string& name) {
  for (const Entry& e : entries_of(zip))
    if (e.name == name) return e;
  throw std::runtime_error("no record " + name);
}

/// The same archive as a ZIP64 writer (an archive over 4 GiB) would lay it out: the EOCD's counts,
/// size and offset set to 0xFFFF / 0xFFFFFFFF, their values in a ZIP64 EOCD and locator before it.
std::string as_zip64(const std::string& zip) {
  const std::size_t eocd = eocd_of(zip);
  const std::uint64_t entries = le(zip, eocd + 10, 2), dir_size = le(zip, eocd + 12, 4), dir = le(zip, eocd + 16, 4);
  std::string out = zip.substr(0, eocd);
  const std::uint64_t zip64_eocd = out.size();
  for (const auto& [value, bytes] : std::vector<std::pair<std::uint64_t, int>>{{0x06064b50, 4},
                                                                               {44, 8},
                                                                               {45, 2},
                                                                               {45, 2},
                                                                               {0, 4},
                                                                               {0, 4},
                                                                               {entries, 8},
                                                                               {entries, 8},
                                                                               {dir_size, 8},
                                                                               {dir, 8},  // ZIP64 EOCD
                                                                               {0x07064b50, 4},
                                                                               {0, 4},
                                                                               {zip64_eocd, 8},
                                                                               {1, 4}})  // its locator
    put_le(out, value, bytes);
  std::string end = zip.substr(eocd);
  set_le(end, 8, 0xFFFF, 2);
  set_le(end, 10, 0xFFFF, 2);
  set_le(end, 12, 0xFFFFFFFF, 4);
  set_le(end, 16, 0xFFFFFFFF, 4);
  return out + end;
}

/// The same archive with every local header offset in a ZIP64 extra field (0xFFFFFFFF in the entry).
std::string zip64_offsets(const std::string& zip) {
  const std::size_t eocd = eocd_of(zip), dir = le(zip, eocd + 16, 4);
  std::string out = zip.substr(0, dir);
  std::size_t pos = dir;
  for (std::uint64_t i = 0, n = le(zip, eocd + 10, 2); i < n; ++i) {
    const std::size_t name = le(zip, pos + 28, 2), extra = le(zip, pos + 30, 2), comment = le(zip, pos + 32, 2);
    std::string e = zip.substr(pos, 46 + name + extra);
    set_le(e, 42, 0xFFFFFFFF, 4);
    set_le(e, 30, extra + 12, 2);
    put_le(e, 1, 2);  // the ZIP64 extra field: id 1, 8 bytes, the offset
    put_le(e, 8, 2);
    put_le(e, le(zip, pos + 42, 4), 8);
    out += e + zip.substr(pos + 46 + name + extra, comment);
    pos += 46 + name + extra + comment;
  }
  std::string end = zip.substr(eocd);
  set_le(end, 12, out.size() - dir, 4);
  return out + end;
}

// ---- Archives and the check ----

std::string archive_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("attn_zip_records_" + std::to_string(::getpid()) + "_" + name)).string();
}

/// What write_torch_dict writes for a 3 MB tensor (its record spans several of the check's 1 MB reads).
std::string torch_dict_archive(const std::string& path) {
  std::vector<std::int32_t> values(2500 * 300);
  std::iota(values.begin(), values.end(), 0);
  io::write_torch_dict(path, {{"format", std::string("attn.test/1")},
                              {"x", io::TensorView{io::TensorView::DType::kInt32, values.data(), {2500, 300}}},
                              {"words", std::vector<std::string>{"a", "caf\xc3\xa9"}}});
  std::string zip = io::read_file(path);
  std::filesystem::remove(path);
  return zip;
}

/// What LibTorch writes for a TorchScript module: tensors stored, the code deflated.
std::string module_archive() {
  torch::jit::Module m(c10::QualifiedName("attn_test.Scale"));
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("w", torch::ones({4}), /*is_buffer=*/false);
  m.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w + 1.0\n");
  std::ostringstream out;
  m.save(out);
  return out.str();
}

using Wanted = std::function<bool(const std::string& name)>;

/// check_zip_records over bytes in memory.
void check_bytes(
    const std::string& zip, const std::string& what, const Wanted& wanted = [](const std::string&) { return true; }) {
  const io::ReadAt read = [&zip](std::uint64_t offset, char* out, std::size_t n) -> std::size_t {
    if (offset >= zip.size()) return 0;
    return zip.copy(out, n, static_cast<std::size_t>(offset));
  };
  io::check_zip_records(read, zip.size(), what, wanted);
}

/// check_zip_sizes over bytes in memory.
void check_sizes(const std::string& zip, const std::string& what) {
  const io::ReadAt read = [&zip](std::uint64_t offset, char* out, std::size_t n) -> std::size_t {
    if (offset >= zip.size()) return 0;
    return zip.copy(out, n, static_cast<std::size_t>(offset));
  };
  io::check_zip_sizes(read, zip.size(), what, [](const std::string&) { return true; });
}

}  // namespace

TEST_CASE("check_zip_records: what attn and LibTorch write passes, every record offered to `wanted`", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  std::vector<std::string> names;
  const Wanted record_names = [&names](const std::string& name) {
    names.push_back(name);
    return true;
  };
  CHECK_NOTHROW(check_bytes(zip, path, record_names));
  CHECK(names == std::vector<std::string>{"archive/data.pkl", "archive/data/0", "archive/version"});

  // data.pt as attn prepare writes it
  io::PreparedData d;
  d.x = text::pad_sequences(std::vector<text::Sequence>{{1, 2, 3}, {4}}, text::PadOptions{3});
  d.label_names = {"toxic"};
  d.labels = {1, 0};
  d.ids = {"a", "b"};
  const std::string data_pt = archive_path("data.pt");
  io::write_prepared(data_pt, d);
  CHECK_NOTHROW(check_bytes(io::read_file(data_pt), data_pt));
  std::filesystem::remove(data_pt);

  // a TorchScript module as LibTorch saves it (model.pt), its code deflated
  const std::string module = module_archive();
  const std::vector<Entry> records = entries_of(module);
  CHECK(std::any_of(records.begin(), records.end(), [](const Entry& e) { return e.method == 8; }));
  CHECK_NOTHROW(check_bytes(module, "model.pt"));
}

TEST_CASE("check_zip_records: a changed byte in a record is a CRC-32 mismatch naming the file and the record", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const Entry x = entry(zip, "archive/data/0");
  REQUIRE(x.stored == std::uint64_t{2500 * 300 * 4});
  // The first, a middle and the last byte of a stored record (read in 1 MB pieces).
  for (const std::uint64_t at : {std::uint64_t{0}, x.stored / 2, x.stored - 1}) {
    std::string bad = zip;
    bad[x.data + at] ^= 0x01;
    INFO("byte " << at);
    CHECK_THROWS_WITH(check_bytes(bad, path), path + ": record 'archive/data/0' does not match its CRC-32: the file is corrupt");
    // Records `wanted` rejects are not read (check_archive leaves tensor data to attn's own checksums).
    CHECK_NOTHROW(check_bytes(bad, path, [](const std::string& name) { return name != "archive/data/0"; }));
  }
  // A deflated record (TorchScript code): its inflated bytes are checked against the CRC-32, and a
  // stream zlib cannot inflate is refused the same way. (A flipped bit may leave a deflate stream
  // inflating to the same bytes, so the tests change the recorded CRC-32 or ruin the whole stream.)
  const std::string module = module_archive();
  const std::vector<Entry> records = entries_of(module);
  const auto code = std::find_if(records.begin(), records.end(), [](const Entry& e) { return e.method == 8; });
  REQUIRE(code != records.end());
  const std::string code_corrupt = "model.pt: record '" + code->name + "' does not match its CRC-32: the file is corrupt";
  std::string bad = module;
  set_le(bad, code->central + 16, le(module, code->central + 16, 4) ^ 1, 4);
  CHECK_THROWS_WITH(check_bytes(bad, "model.pt"), code_corrupt);
  bad = module;
  std::fill_n(bad.begin() + static_cast<std::ptrdiff_t>(code->data), code->stored, '\xFF');  // block type 3: invalid
  CHECK_THROWS_WITH(check_bytes(bad, "model.pt"), code_corrupt);
}

TEST_CASE("check_zip_records: a cut file is not a ZIP archive any more", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const std::string not_zip = path + ": not a ZIP archive (no end-of-central-directory record)";
  CHECK_THROWS_WITH(check_bytes(zip.substr(0, zip.size() - 1), path), not_zip);
  CHECK_THROWS_WITH(check_bytes(zip.substr(0, zip.size() / 2), path), not_zip);
  CHECK_THROWS_WITH(check_bytes("", path), not_zip);
  CHECK_THROWS_WITH(check_bytes("not a zip", path), not_zip);
}

TEST_CASE("check_zip_records: a directory pointing outside the file is refused, not followed", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const std::size_t eocd = eocd_of(zip);
  const Entry x = entry(zip, "archive/data/0");
  const std::string outside = path + ": record 'archive/data/0' lies outside the file: the file is truncated or corrupt";

  std::string bad = zip;
  set_le(bad, eocd + 16, zip.size() + 1, 4);  // the central directory's offset
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": the central directory lies outside the file: the file is truncated or corrupt");

  bad = zip;
  set_le(bad, x.central + 42, zip.size() + 100, 4);  // the record's local header offset
  CHECK_THROWS_WITH(check_bytes(bad, path), outside);
  set_le(bad, x.central + 42, zip.size() - 10, 4);  // a local header cut by the end of the file
  CHECK_THROWS_WITH(check_bytes(bad, path), outside);

  bad = zip;
  set_le(bad, x.central + 20, zip.size(), 4);  // stored and plain sizes: past the end
  set_le(bad, x.central + 24, zip.size(), 4);
  CHECK_THROWS_WITH(check_bytes(bad, path), outside);

  bad = zip;
  set_le(bad, x.central + 24, x.stored + 1, 4);  // a stored record whose two sizes differ
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": record 'archive/data/0': corrupt sizes");
}

TEST_CASE("check_zip_sizes: stated sizes the file cannot hold are refused without reading the records", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const Entry x = entry(zip, "archive/data/0");
  CHECK_NOTHROW(check_sizes(zip, path));
  CHECK_NOTHROW(check_sizes(module_archive(), "model.pt"));
  std::string bad = zip;
  bad[x.data] ^= 0x01;  // a changed byte: the CRC-32's business, not the sizes'
  CHECK_NOTHROW(check_sizes(bad, path));
  bad = zip;
  set_le(bad, x.central + 20, zip.size(), 4);  // stored and plain sizes: past the end
  set_le(bad, x.central + 24, zip.size(), 4);
  CHECK_THROWS_WITH(check_sizes(bad, path), path + ": record 'archive/data/0' lies outside the file: the file is truncated or corrupt");
  bad = zip;
  set_le(bad, x.central + 24, x.stored + 1, 4);  // a stored record whose two sizes differ
  CHECK_THROWS_WITH(check_sizes(bad, path), path + ": record 'archive/data/0': corrupt sizes");
  // A deflated record (the code) stated to inflate to 4 GB: more than DEFLATE's 1032 to 1 allows.
  const std::string module = module_archive();
  const std::vector<Entry> records = entries_of(module);
  const auto code = std::find_if(records.begin(), records.end(), [](const Entry& e) { return e.method == 8; });
  REQUIRE(code != records.end());
  bad = module;
  set_le(bad, code->central + 24, 0xFBFFFFFF, 4);
  CHECK_THROWS_WITH(check_sizes(bad, "model.pt"), "model.pt: record '" + code->name + "': corrupt sizes");
  CHECK_THROWS_AS(check_sizes("not a zip", path), io::NotZipArchive);
}

TEST_CASE("check_zip_records: broken signatures are refused, naming the file", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const std::vector<Entry> records = entries_of(zip);
  const Entry x = entry(zip, "archive/data/0");

  std::string bad = zip;
  bad[x.local] = 'X';  // "PK\3\4"
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": record 'archive/data/0' has no local header: the file is corrupt");

  bad = zip;
  bad[records.front().central] = 'X';  // "PK\1\2"
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": central directory entry 0 is corrupt");

  bad = zip;
  bad[eocd_of(zip)] = 'X';  // "PK\5\6"
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": not a ZIP archive (no end-of-central-directory record)");
}

TEST_CASE("check_zip_records: ZIP64 directories (archives over 4 GiB) are read and checked", "[io][zip]") {
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const Entry x = entry(zip, "archive/data/0");  // the records' bytes do not move below
  CHECK_NOTHROW(check_bytes(as_zip64(zip), path));
  CHECK_NOTHROW(check_bytes(zip64_offsets(zip), path));
  const std::string zip64 = as_zip64(zip64_offsets(zip));
  CHECK_NOTHROW(check_bytes(zip64, path));
  std::string bad = zip64;
  bad[x.data + 12345] ^= 0x01;
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": record 'archive/data/0' does not match its CRC-32: the file is corrupt");

  const std::size_t eocd = eocd_of(zip64), locator = eocd - 20, zip64_eocd = le(zip64, locator + 8, 8);
  bad = zip64;
  bad[locator] = 'X';
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": not a ZIP archive (no ZIP64 locator)");
  bad = zip64;
  bad[zip64_eocd] = 'X';
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": not a ZIP archive (bad ZIP64 end of central directory)");
}

TEST_CASE("check_zip_records: with a ZIP64 record its directory is checked, as LibTorch's reader follows it", "[io][zip]") {
  // LibTorch writes both records with the real values; its reader (miniz) follows the ZIP64 one
  // whatever the EOCD says, so a changed EOCD must not hide records from the check.
  const std::string path = archive_path("dict.pt");
  const std::string zip = torch_dict_archive(path);
  const std::size_t plain_eocd = eocd_of(zip);
  const std::uint64_t entries = le(zip, plain_eocd + 10, 2);
  const Entry x = entry(zip, "archive/data/0");
  std::string both = as_zip64(zip);
  const std::size_t eocd = eocd_of(both), zip64_eocd = le(both, eocd - 20 + 8, 8);
  for (const int at : {8, 10, 12, 16}) set_le(both, eocd + at, le(zip, plain_eocd + at, at < 12 ? 2 : 4), at < 12 ? 2 : 4);
  CHECK_NOTHROW(check_bytes(both, path));
  std::string bad = both;
  set_le(bad, eocd + 8, 0, 2);  // the EOCD counts no entries (what libFuzzer made of a model.pt)
  set_le(bad, eocd + 10, 0, 2);
  bad[x.data + 7] ^= 0x01;
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": record 'archive/data/0' does not match its CRC-32: the file is corrupt");
  bad = both;
  set_le(bad, zip64_eocd + 24, entries + 1, 8);  // the ZIP64 record's two counts
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": the end-of-central-directory record is corrupt (" + std::to_string(entries + 1) +
                                                " and " + std::to_string(entries) + " entries)");
  bad = zip;  // no ZIP64 record: the EOCD's two counts
  set_le(bad, plain_eocd + 8, entries + 1, 2);
  CHECK_THROWS_WITH(check_bytes(bad, path), path + ": the end-of-central-directory record is corrupt (" + std::to_string(entries + 1) +
                                                " and " + std::to_string(entries) + " entries)");
}
