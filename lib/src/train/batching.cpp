#include "attn/train/batching.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace attn::train {

std::vector<std::vector<std::int64_t>> make_batches(const std::vector<std::int64_t>& rows,
                                                    const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                                                    bool bucket, bool shuffle, std::uint64_t seed) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be >= 1");
  std::vector<std::int64_t> order = rows;
  std::mt19937_64 rng(seed);
  if (shuffle) std::shuffle(order.begin(), order.end(), rng);
  if (bucket)
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return lengths[static_cast<std::size_t>(a)] < lengths[static_cast<std::size_t>(b)]; });
  std::vector<std::vector<std::int64_t>> batches;
  for (std::size_t i = 0; i < order.size(); i += static_cast<std::size_t>(batch_size))
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + static_cast<std::size_t>(batch_size))));
  if (shuffle && bucket) std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

}  // namespace attn::train
