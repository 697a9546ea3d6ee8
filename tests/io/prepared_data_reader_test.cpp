// Reading data.pt with LibTorch: a file that is not one, or not attn prepare's, named with its key.
#include <unistd.h>

#include <filesystem>

#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data_reader.h"
#include "attn/io/torch_save.h"

using namespace attn;

TEST_CASE("a corrupt data.pt is a clear error naming the file", "[io]") {
  const auto path = (std::filesystem::temp_directory_path() / "attn_corrupt.pt").string();
  io::write_file_atomic(path, "not a zip");
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::StartsWith(path + ": not a LibTorch archive"));
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(io::read_prepared("/nonexistent/data.pt"), Catch::Contains("/nonexistent/data.pt: no such file"));
}

TEST_CASE("a data.pt not as attn prepare writes it is refused naming the key", "[io]") {
  const auto path = (std::filesystem::temp_directory_path() / ("attn_reader_keys_" + std::to_string(::getpid()) + ".pt")).string();
  using View = io::TensorView;
  const std::vector<std::int32_t> x = {1, 2, 3, 4};
  const std::vector<std::int64_t> wide = {1, 2, 3, 4}, lengths = {2, 2};
  const std::pair<std::string, io::TorchSaveValue> format{"format", std::string(io::kPreparedFormat)};
  io::write_torch_dict(path, {{"format", std::string("attn.prepared/0")}});
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::Contains(path + ": key 'format'"));
  io::write_torch_dict(path, {format, {"x", View{View::DType::kInt64, wide.data(), {2, 2}}}});
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::Contains(path + ": key 'x': expected dtype"));
  io::write_torch_dict(path, {format,
                              {"x", View{View::DType::kInt32, x.data(), {2, 2}}},
                              {"lengths", View{View::DType::kInt64, lengths.data(), {2}}},
                              {"label_names", std::vector<std::string>{}}});
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::Contains(path + ": key 'ids': missing"));
  io::write_torch_dict(path, {format,
                              {"x", View{View::DType::kInt32, x.data(), {2, 2}}},
                              {"lengths", View{View::DType::kInt64, lengths.data(), {2}}},
                              {"label_names", std::vector<std::string>{}},
                              {"ids", std::vector<std::string>{"only one"}}});
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::Contains(path + ": key 'ids': length differs from the rows of 'x'"));
  std::filesystem::remove(path);
}
