#include <cstdio>
#include <filesystem>

#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data.h"
#include "attn/io/prepared_data_reader.h"

using namespace attn;

namespace {
io::PreparedData round_trip(const io::PreparedData& d) {
  const auto path = (std::filesystem::temp_directory_path() / "attn_prepared_test.pt").string();
  io::write_prepared(path, d);
  auto back = io::read_prepared(path);
  std::filesystem::remove(path);
  return back;
}
}  // namespace

TEST_CASE("data.pt round-trips through pickle_save / pickle_load", "[io]") {
  io::PreparedData d;
  d.x = text::pad_sequences(std::vector<text::Sequence>{{1, 2, 3}, {4}}, text::PadOptions{3});
  d.label_names = {"toxic", "insult"};
  d.labels = {1, 0, 0, 1};
  d.ids = {"a1", "b2"};
  const auto back = round_trip(d);
  CHECK(back.x.rows == 2);
  CHECK(back.x.cols == 3);
  CHECK(back.x.ids == d.x.ids);
  CHECK(back.x.lengths == std::vector<std::int64_t>{3, 1});
  CHECK(back.label_names == d.label_names);
  CHECK(back.labels == d.labels);
  CHECK(back.ids == d.ids);
}

TEST_CASE("an unlabelled data.pt has no labels", "[io]") {
  io::PreparedData d;
  d.x = text::pad_sequences(std::vector<text::Sequence>{{7}}, text::PadOptions{2});
  d.ids = {"1"};
  const auto back = round_trip(d);
  CHECK(back.label_names.empty());
  CHECK(back.labels.empty());
}

TEST_CASE("a corrupt data.pt is a clear error naming the file", "[io]") {
  const auto path = (std::filesystem::temp_directory_path() / "attn_corrupt.pt").string();
  io::write_file_atomic(path, "not a zip");
  CHECK_THROWS_WITH(io::read_prepared(path), Catch::StartsWith(path + ": not a LibTorch archive"));
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(io::read_prepared("/nonexistent/data.pt"), Catch::Contains("/nonexistent/data.pt: no such file"));
}
