// torch.save's format written without LibTorch (torch_save.cpp), read back by LibTorch's own reader.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <stdexcept>

#include <torch/script.h>
#include <torch/serialize.h>
#include <catch2/catch.hpp>

#include "attn/io/torch_save.h"

using namespace attn;

TEST_CASE("write_torch_dict: strings, string lists and tensors of each dtype, as torch.load reads them", "[io][torch_save]") {
  const std::string path = (std::filesystem::temp_directory_path() / ("attn_torch_save_" + std::to_string(::getpid()) + ".pt")).string();
  const std::vector<std::int32_t> ids = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> lengths = {3, 0};
  const std::vector<float> values = {0.5f, -1.25f};
  io::write_torch_dict(path, {{"name", std::string("caf\xc3\xa9 \"q\"")},
                              {"ids", io::TensorView{io::TensorView::DType::kInt32, ids.data(), {2, 3}}},
                              {"lengths", io::TensorView{io::TensorView::DType::kInt64, lengths.data(), {2}}},
                              {"values", io::TensorView{io::TensorView::DType::kFloat32, values.data(), {2}}},
                              {"words", std::vector<std::string>{"a", "", "\xc3\xa9"}}});
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto dict = torch::pickle_load(bytes).toGenericDict();
  CHECK(dict.at("name").toStringRef() == "caf\xc3\xa9 \"q\"");
  const torch::Tensor t = dict.at("ids").toTensor();
  CHECK(t.scalar_type() == torch::kInt32);
  CHECK(t.sizes() == torch::IntArrayRef({2, 3}));
  CHECK(t[1][2].item<int>() == 6);
  CHECK(dict.at("lengths").toTensor().scalar_type() == torch::kInt64);
  CHECK(dict.at("lengths").toTensor()[0].item<std::int64_t>() == 3);
  CHECK(dict.at("values").toTensor()[1].item<float>() == -1.25f);
  const auto words = dict.at("words").toList();
  REQUIRE(words.size() == 3);
  CHECK(words.get(2).toStringRef() == "\xc3\xa9");
  CHECK_THROWS_WITH(io::write_torch_dict("/nonexistent/dir/x.pt", {}), Catch::Contains("/nonexistent/dir/x.pt"));
  std::filesystem::remove(path);
}

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("attn_torch_save_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

/// CRC-32 as zip defines it (reflected polynomial 0xEDB88320), bit by bit: an oracle independent of zlib.
std::uint32_t crc32_bitwise(const void* data, std::size_t n) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= static_cast<const unsigned char*>(data)[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/// The CRC-32 field of the local header of the zip entry `name` in `file`.
std::uint32_t local_header_crc(const std::string& file, const std::string& name) {
  const std::size_t at = file.find(name);
  if (at == std::string::npos || at < 30) throw std::runtime_error("no entry " + name);
  const auto* h = reinterpret_cast<const unsigned char*>(file.data() + at - 30);
  return static_cast<std::uint32_t>(h[14]) | static_cast<std::uint32_t>(h[15]) << 8 | static_cast<std::uint32_t>(h[16]) << 16 |
         static_cast<std::uint32_t>(h[17]) << 24;
}

}  // namespace

TEST_CASE("write_torch_dict: a tensor made in chunks by several threads is the same file, with the right CRC", "[io][torch_save]") {
  // 2,500 rows of 300 int32: 3 MB, so three 1 MB chunks of whole rows and a short last one.
  const std::int64_t rows = 2500, cols = 300;
  std::vector<std::int32_t> values(static_cast<std::size_t>(rows * cols));
  std::iota(values.begin(), values.end(), -7);
  const io::TensorView whole{io::TensorView::DType::kInt32, values.data(), {rows, cols}};
  io::TensorView made{io::TensorView::DType::kInt32, nullptr, {rows, cols}};
  made.rows = [&](std::int64_t first, std::int64_t count, void* out) {
    std::copy(values.begin() + first * cols, values.begin() + (first + count) * cols, static_cast<std::int32_t*>(out));
  };
  const std::string reference = temp_path("reference.pt");
  io::write_torch_dict(reference, {{"format", std::string("f")}, {"x", whole}});
  const std::string expected = bytes_of(reference);
  CHECK(local_header_crc(expected, "archive/data/0") == crc32_bitwise(values.data(), values.size() * sizeof(std::int32_t)));
  for (int threads : {1, 2, 3}) {
    for (const io::TensorView& view : {whole, made}) {
      const std::string path = temp_path("chunked.pt");
      io::write_torch_dict(path, {{"format", std::string("f")}, {"x", view}}, threads);
      INFO("threads " << threads << (view.rows ? ", made by rows()" : ", from memory"));
      CHECK(bytes_of(path) == expected);
      std::filesystem::remove(path);
    }
  }
  std::filesystem::remove(reference);
}

TEST_CASE("write_torch_dict: a chunk that fails to be made is the write's error, on any thread", "[io][torch_save]") {
  const std::int64_t rows = 4000, cols = 256;
  io::TensorView failing{io::TensorView::DType::kFloat32, nullptr, {rows, cols}};
  failing.rows = [&](std::int64_t first, std::int64_t count, void* out) {
    if (first >= rows / 2) throw std::runtime_error("row " + std::to_string(first) + " could not be made");
    std::fill_n(static_cast<float*>(out), count * cols, 1.0f);
  };
  const std::string path = temp_path("failing.pt");
  for (int threads : {1, 2, 4})
    CHECK_THROWS_WITH(io::write_torch_dict(path, {{"x", failing}}, threads), Catch::Contains("could not be made"));
  std::filesystem::remove(path);
}
