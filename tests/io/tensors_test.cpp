#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>

#include <torch/script.h>
#include <torch/serialize.h>
#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data.h"
#include "attn/io/prepared_data_reader.h"
#include "attn/io/tensors.h"

using namespace attn;

TEST_CASE("require_in_storage: a shape that reaches past the tensor's data is refused, naming it", "[io][tensors]") {
  CHECK_NOTHROW(io::require_in_storage(torch::zeros({3, 4}), "m.pt", "w"));
  CHECK_NOTHROW(io::require_in_storage(torch::zeros({3, 4}).t(), "m.pt", "w"));
  CHECK_NOTHROW(io::require_in_storage(torch::zeros({6}).narrow(0, 2, 4), "m.pt", "w"));
  CHECK_NOTHROW(io::require_in_storage(torch::zeros({0, 5}), "m.pt", "empty"));
  // What LibTorch's unpickler builds from a file whose shape was corrupted: metadata set unchecked.
  torch::Tensor t = torch::zeros({4});
  t.unsafeGetTensorImpl()->set_sizes_contiguous({3, 4});
  CHECK_THROWS_WITH(io::require_in_storage(t, "m.pt", "embedding.weight"),
                    "m.pt: tensor 'embedding.weight' has shape [3, 4] but 16 bytes of data: the file is corrupt");
  t = torch::zeros({4});
  t.unsafeGetTensorImpl()->set_storage_offset(2);
  t.unsafeGetTensorImpl()->set_sizes_contiguous({3});
  CHECK_THROWS_WITH(io::require_in_storage(t, "m.pt", "b"), Catch::Contains("tensor 'b' has shape [3]"));
  t = torch::zeros({4});
  const std::vector<std::int64_t> sizes = {2}, strides = {std::int64_t(1) << 62};
  t.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes), c10::IntArrayRef(strides));
  CHECK_THROWS_WITH(io::require_in_storage(t, "m.pt", "c"),
                    Catch::StartsWith("m.pt: tensor 'c' ") && Catch::EndsWith("the file is corrupt"));
}

TEST_CASE("fuzz finding: a data.pt whose zip directory points past the end is refused, not read past its end", "[io][tensors]") {
  // libFuzzer (scripts/fuzz.sh) found that torch::pickle_load reads such a file out of bounds
  // (AddressSanitizer: heap-buffer-overflow in the zip reader): data.pt is now read from the file.
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/data_pt-zip-directory-overrun.pt";
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::StartsWith(path + ": "));
}

TEST_CASE("fuzz finding: a data.pt whose pickle names a memo index of 2^31 is refused without allocating 31 GB", "[io][tensors]") {
  // libFuzzer found it: LibTorch's unpickler resizes its memo table to any LONG_BINPUT index.
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/data_pt-memo-index-2e9.pt";
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::StartsWith(path + ": ") && Catch::Contains("a memo index of"));
}

TEST_CASE("check_archive: accepts what LibTorch and attn write, refuses a pickle with a length past its end", "[io][tensors]") {
  const auto dir = std::filesystem::temp_directory_path() / "attn_tensors_test";
  std::filesystem::create_directories(dir);
  io::PreparedData d;
  d.x = text::pad_sequences(std::vector<text::Sequence>{{1, 2}}, text::PadOptions{2});
  d.ids = {"a"};
  const std::string data_pt = (dir / "data.pt").string();
  io::write_prepared(data_pt, d);
  CHECK_NOTHROW(io::check_archive(data_pt));
  // A string length inside data.pkl raised to 2^31 - 1: refused before anything is allocated.
  std::string bytes = io::read_file(data_pt);
  const std::string key = std::string(
      "X\x06\x00\x00\x00"
      "format",
      11);
  const auto at = bytes.find(key);
  REQUIRE(at != std::string::npos);
  bytes.replace(at + 1, 4, std::string("\xff\xff\xff\x7f", 4));
  const std::string bad = (dir / "bad.pt").string();
  io::write_file_atomic(bad, bytes);
  CHECK_THROWS_WITH(io::check_archive(bad), Catch::Contains(bad) && Catch::Contains("data.pkl: corrupt pickle at byte") &&
                                                Catch::Contains("a length of 2147483647 bytes"));
  CHECK_THROWS_WITH(io::read_prepared(bad), Catch::Contains("corrupt pickle"));
  std::filesystem::remove_all(dir);
}

namespace {
/// Sets the sizes the ZIP directory states for record `name` (the central directory entry's and the
/// local header's: compressed and uncompressed) to `size`.
std::string with_stated_size(std::string zip, const std::string& name, std::uint32_t size) {
  const auto set = [&](std::size_t at) {
    for (int i = 0; i < 4; ++i) zip.at(at + static_cast<std::size_t>(i)) = static_cast<char>((size >> (8 * i)) & 0xFF);
  };
  for (const std::string& header : {std::string("PK\x01\x02", 4), std::string("PK\x03\x04", 4)}) {
    const bool central = header[2] == '\x01';
    const std::size_t name_at = central ? 46 : 30, sizes_at = central ? 20 : 18;
    bool found = false;
    for (std::size_t at = zip.find(header); at != std::string::npos; at = zip.find(header, at + 1))
      if (zip.compare(at + name_at, name.size(), name) == 0) {
        set(at + sizes_at);
        set(at + sizes_at + 4);
        found = true;
      }
    REQUIRE(found);
  }
  return zip;
}
}  // namespace

TEST_CASE("check_archive: a tensor record stated shorter or longer than its pickle's storage is refused, naming both", "[io][tensors]") {
  // libFuzzer found it (CI, 2026-11-29): a model.pt whose ZIP directory states a shorter record
  // for a tensor than its pickle's storage. LibTorch's unpickler gave the storage the pickle's size
  // over the record's bytes, and copying the weights read past their end (SEGV under ASan).
  torch::jit::Module m("m");
  m.register_parameter("w", torch::ones({2, 3}), false);
  std::ostringstream out;
  m.save(out);
  const std::string zip = out.str();
  CHECK_NOTHROW(io::check_archive_bytes(zip, "m.pt"));
  CHECK_THROWS_WITH(io::check_archive_bytes(with_stated_size(zip, "archive/data/0", 0), "m.pt"),
                    "m.pt: record 'data/0' holds 0 bytes where data.pkl states 24 (6 of FloatStorage): the file is corrupt");
  CHECK_THROWS_WITH(io::check_archive_bytes(with_stated_size(zip, "archive/data/0", 16), "m.pt"),
                    Catch::StartsWith("m.pt: record 'data/0' holds 16 bytes where data.pkl states 24"));
  // Stated longer than the file: refused before LibTorch allocates it (the fuzzer's 4 GB data record).
  CHECK_THROWS_WITH(io::check_archive_bytes(with_stated_size(zip, "archive/data/0", 0xFFFFFFFE), "m.pt"),
                    "m.pt: record 'archive/data/0' lies outside the file: the file is truncated or corrupt");
}
