#pragma once
// Between the rows of x or y and a step's unit-major block. A step's rows sit anywhere in y [B * T, width] (each row's H values at column
// `col`); a block [H, ld] holds them unit-major. Both transposes go eight rows at a time, the next rows prefetched, so that each row's
// cache lines are fetched once. Internal to lib/ (fused_lstm.cpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace attn::nn::row_blocks {

constexpr std::int64_t kRowBlock = 8;

inline void prefetch_rows(const float* base, const std::int64_t* source, std::int64_t from, std::int64_t to, std::int64_t width,
                          std::int64_t col, std::int64_t H) {
  for (std::int64_t j = from; j < to; ++j)
    for (std::int64_t k = 0; k < H; k += 16) __builtin_prefetch(base + source[j] * width + col + k);
}

/// y[source[j], col + k] = block[k * ld + j] for j < rows, k < H.
inline void scatter_rows(const float* block, std::int64_t ld, std::int64_t rows, std::int64_t H, const std::int64_t* source, float* y,
                         std::int64_t width, std::int64_t col) {
  for (std::int64_t j0 = 0; j0 < rows; j0 += kRowBlock) {
    const std::int64_t n = std::min(kRowBlock, rows - j0);
    prefetch_rows(y, source, j0 + kRowBlock, std::min(rows, j0 + 2 * kRowBlock), width, col, H);
    float* out[kRowBlock];
    for (std::int64_t jj = 0; jj < n; ++jj) out[jj] = y + source[j0 + jj] * width + col;
    for (std::int64_t k = 0; k < H; ++k)
      for (std::int64_t jj = 0; jj < n; ++jj) out[jj][k] = block[k * ld + j0 + jj];
  }
}

/// block[k * ld + j] += dy[source[j], col + k] for j < rows, k < H.
inline void gather_rows_add(const float* dy, std::int64_t width, std::int64_t col, const std::int64_t* source, std::int64_t rows,
                            std::int64_t H, float* block, std::int64_t ld) {
  for (std::int64_t j0 = 0; j0 < rows; j0 += kRowBlock) {
    const std::int64_t n = std::min(kRowBlock, rows - j0);
    prefetch_rows(dy, source, j0 + kRowBlock, std::min(rows, j0 + 2 * kRowBlock), width, col, H);
    const float* in[kRowBlock];
    for (std::int64_t jj = 0; jj < n; ++jj) in[jj] = dy + source[j0 + jj] * width + col;
    for (std::int64_t k = 0; k < H; ++k)
      for (std::int64_t jj = 0; jj < n; ++jj) block[k * ld + j0 + jj] += in[jj][k];
  }
}

/// rows[r] = 0 (width values each) for each r in `which`.
inline void zero_rows(float* rows, std::int64_t width, const std::vector<std::int64_t>& which) {
  for (const std::int64_t r : which) std::memset(rows + r * width, 0, sizeof(float) * static_cast<std::size_t>(width));
}

/// x_grad[source[n]] (=, or += when `add`) from[n] for packed rows begin <= n < end, I values each.
inline void add_rows(const float* __restrict from, const std::int64_t* source, std::int64_t begin, std::int64_t end, std::int64_t I,
                     float* __restrict x_grad, bool add) {
  for (std::int64_t n = begin; n < end; ++n) {
    float* __restrict row = x_grad + source[n] * I;
    const float* __restrict value = from + n * I;
    if (add)
      for (std::int64_t k = 0; k < I; ++k) row[k] += value[k];
    else
      std::memcpy(row, value, sizeof(float) * static_cast<std::size_t>(I));
  }
}

}  // namespace attn::nn::row_blocks
