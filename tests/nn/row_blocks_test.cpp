// The fused LSTM's moves between rows and a step's unit-major block (lib/src/nn/row_blocks.h):
// a scatter and a gather are each other's transposes, for any row count around the block of eight.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "nn/row_blocks.h"

namespace rb = attn::nn::row_blocks;

TEST_CASE("scatter_rows and gather_rows_add move a block to its rows and back", "[nn][row_blocks]") {
  for (const std::int64_t rows : {1, 7, 8, 9, 17}) {
    const std::int64_t H = 5, width = 12, col = 6, ld = rows + 3;
    std::vector<std::int64_t> source;
    for (std::int64_t j = 0; j < rows; ++j) source.push_back(rows + 3 - j);  // distinct, reversed
    std::vector<float> block(static_cast<std::size_t>(H * ld), -1.0f);
    for (std::int64_t k = 0; k < H; ++k)
      for (std::int64_t j = 0; j < rows; ++j) block[static_cast<std::size_t>(k * ld + j)] = static_cast<float>(100 * k + j);
    std::vector<float> y(static_cast<std::size_t>((rows + 4) * width), 0.0f);
    rb::scatter_rows(block.data(), ld, rows, H, source.data(), y.data(), width, col);
    for (std::int64_t j = 0; j < rows; ++j)
      for (std::int64_t k = 0; k < H; ++k)
        CHECK(y[static_cast<std::size_t>(source[j] * width + col + k)] == static_cast<float>(100 * k + j));
    std::vector<float> back(static_cast<std::size_t>(H * ld), 1.0f);
    rb::gather_rows_add(y.data(), width, col, source.data(), rows, H, back.data(), ld);
    for (std::int64_t k = 0; k < H; ++k)
      for (std::int64_t j = 0; j < rows; ++j) CHECK(back[static_cast<std::size_t>(k * ld + j)] == static_cast<float>(100 * k + j) + 1.0f);
  }
}

TEST_CASE("zero_rows and add_rows write the rows named, no others", "[nn][row_blocks]") {
  std::vector<float> x(12, 2.0f);  // 4 rows of 3
  rb::zero_rows(x.data(), 3, {1, 3});
  CHECK(x == std::vector<float>{2, 2, 2, 0, 0, 0, 2, 2, 2, 0, 0, 0});
  const std::vector<float> from = {1, 2, 3, 4, 5, 6};  // packed rows 0 and 1
  const std::int64_t source[] = {3, 0};
  rb::add_rows(from.data(), source, 0, 2, 3, x.data(), true);
  CHECK(x == std::vector<float>{6, 7, 8, 0, 0, 0, 2, 2, 2, 1, 2, 3});
  rb::add_rows(from.data(), source, 1, 2, 3, x.data(), false);
  CHECK(x == std::vector<float>{4, 5, 6, 0, 0, 0, 2, 2, 2, 1, 2, 3});
}
