// torch.save's format written without LibTorch (torch_save.cpp), read back by LibTorch's own reader.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>
#include <torch/torch.h>

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
