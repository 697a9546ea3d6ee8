#pragma once
// What attn's autograd kernels (fused_lstm.cpp, fused_gru.cpp, fused_attention.cpp) share: running
// two halves of the work at once, backward passes that use up what their forward pass saved, and
// finding the distinct rows of an input. Internal to lib/.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include <ATen/Parallel.h>
#include <torch/script.h>

namespace attn::nn {

/// Runs f(0) and f(1), at once on two threads when LibTorch may use two or more (each with its own
/// single-threaded BLAS). The work is plain arithmetic on tensors that autograd must not record
/// (the kernel is its own autograd function), on every thread (the gradient mode is a thread's own).
template <class F>
void on_two_threads(const F& f) {
  at::parallel_for(0, 2, 1, [&](std::int64_t begin, std::int64_t end) {
    torch::NoGradGuard no_grad;
    for (std::int64_t i = begin; i < end; ++i) f(static_cast<int>(i));
  });
}

/// Marks what `ctx` saved as used up by this backward pass; a second backward pass through the
/// same forward pass (retain_graph) throws, naming `op`, instead of computing from overwritten values.
inline void use_saved_once(torch::autograd::AutogradContext* ctx, const char* op) {
  TORCH_CHECK(ctx->saved_data.count("used") == 0, op,
              ": a second backward pass through the same forward pass (retain_graph) is not supported: "
              "its backward pass uses up what the forward pass saved");
  ctx->saved_data["used"] = true;
}

/// An input's distinct rows: a word repeated in a text, and in the batches of integrated gradients
/// and of erasures the same words in many versions of a text, are one row each, so that a
/// recurrent layer's input projection W_ih x is computed once for each. Rows are the same when
/// their bytes are (then so are their products, to the bit).
struct DistinctRows {
  torch::Tensor rows;  // [U, I]: each distinct row once, in the order first met
  torch::Tensor of;    // int64 [rows of x]: each real row's place in `rows` (other rows: unused)
};

/// A hash of a row's bytes (multiply-xorshift, 8 bytes at a time): of all of them for a short row,
/// else of 8 words spread evenly over it. Equal rows hash alike; distinct_rows compares the whole
/// rows, so a hash that sees part of a row costs only a probe where two rows agree on that part
/// (rows of different words' embeddings differ nearly everywhere). Sampling makes hashing a
/// 128-float row 8 steps instead of 64.
inline std::uint64_t row_hash(const float* row, std::int64_t I) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(row);
  const std::size_t size = sizeof(float) * static_cast<std::size_t>(I);
  std::uint64_t h = 0x9E3779B97F4A7C15ull;
  const auto mix = [&](std::size_t at) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes + at, std::min<std::size_t>(8, size - at));
    h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  if (size <= 64) {
    for (std::size_t at = 0; at < size; at += 8) mix(at);
  } else {
    for (std::size_t k = 0; k < 8; ++k) mix(k * (size - 8) / 7);
  }
  return h;
}

/// The distinct rows among x_rows [rows, I] (float32, contiguous) at `real` (int64 [N], each real
/// row once), or nothing when more than 9 in 10 are distinct: then projecting every row costs less
/// than finding the repeats and gathering their projections. The search stops early when more than
/// 19 in 20 of the first quarter are.
inline std::optional<DistinctRows> distinct_rows(const torch::Tensor& x_rows, const torch::Tensor& real) {
  const std::int64_t N = real.size(0), I = x_rows.size(1);
  if (N == 0) return std::nullopt;
  std::size_t slots = 1;
  while (slots < 2 * static_cast<std::size_t>(N)) slots *= 2;
  std::vector<std::int64_t> table(slots, -1);  // open addressing: a distinct row's place in `first`
  std::vector<std::int64_t> first;             // each distinct row's first real row of x
  const std::size_t limit = static_cast<std::size_t>(N - N / 10);
  DistinctRows d;
  d.of = torch::zeros({x_rows.size(0)}, torch::kInt64);
  std::int64_t* of = d.of.data_ptr<std::int64_t>();
  const float* x = x_rows.data_ptr<float>();
  const std::int64_t* at = real.data_ptr<std::int64_t>();
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(I);
  for (std::int64_t n = 0; n < N; ++n) {
    if (n == N / 4 && n >= 64 && 20 * first.size() > 19 * static_cast<std::size_t>(n)) return std::nullopt;
    const float* row = x + at[n] * I;
    std::size_t slot = row_hash(row, I) & (slots - 1);
    while (table[slot] >= 0 && std::memcmp(x + first[static_cast<std::size_t>(table[slot])] * I, row, bytes) != 0)
      slot = (slot + 1) & (slots - 1);
    if (table[slot] < 0) {
      if (first.size() == limit) return std::nullopt;
      table[slot] = static_cast<std::int64_t>(first.size());
      first.push_back(at[n]);
    }
    of[at[n]] = table[slot];
  }
  d.rows = x_rows.index_select(0, torch::tensor(first, torch::kInt64));
  return d;
}

}  // namespace attn::nn
