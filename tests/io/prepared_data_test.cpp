#include <unistd.h>
#include <cstdio>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "attn/io/prepared_data.h"
#include "attn/io/prepared_data_reader.h"

using namespace attn;

namespace {
io::PreparedData round_trip(const io::PreparedData& d) {
  // Per process: CTest runs the test cases that call this at the same time.
  const auto path = (std::filesystem::temp_directory_path() / ("attn_prepared_test_" + std::to_string(::getpid()) + ".pt")).string();
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

TEST_CASE("data.pt padded while it is written is the file of the padded matrix", "[io]") {
  // attn prepare keeps only x's shape (text::pad_shape) and pads rows into data.pt chunk by chunk.
  text::SequenceBatch batch;
  for (int r = 0; r < 3000; ++r) {  // 3000 x 120 int32: 1.4 MB, two chunks
    for (int k = 0; k < (r * 37) % 150; ++k) batch.ids.push_back((r * 31 + k) % 20000 + 1);
    batch.offsets.push_back(static_cast<std::int64_t>(batch.ids.size()));
  }
  const text::PadOptions pad{120};
  io::PreparedData in_memory;
  in_memory.x = text::pad_sequences(batch, pad);
  in_memory.label_names = {"toxic"};
  in_memory.labels.assign(3000, 1.0f);
  in_memory.ids.assign(3000, "id");
  io::PreparedData shape_only = in_memory;
  shape_only.x = text::pad_shape(batch, pad);
  const auto dir = std::filesystem::temp_directory_path();
  const auto bytes = [](const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  io::write_prepared((dir / "attn_prepared_memory.pt").string(), in_memory);
  io::write_prepared(
      (dir / "attn_prepared_streamed.pt").string(), shape_only, 2,
      [&](std::int64_t first, std::int64_t count, std::int32_t* out) { text::pad_rows_into(batch, pad, 120, first, count, out); });
  CHECK(bytes(dir / "attn_prepared_streamed.pt") == bytes(dir / "attn_prepared_memory.pt"));
  CHECK(io::read_prepared((dir / "attn_prepared_streamed.pt").string()).x.ids == in_memory.x.ids);
  CHECK_THROWS_WITH(io::write_prepared((dir / "attn_prepared_none.pt").string(), shape_only), Catch::Contains("no x_rows"));
  for (const char* name : {"attn_prepared_memory.pt", "attn_prepared_streamed.pt", "attn_prepared_none.pt"})
    std::filesystem::remove(dir / name);
}
