#pragma once
/// Splitting rows into batches. Bucketing puts rows of similar length together, so a batch needs
/// little or no padding and an epoch costs what its real tokens cost, not rows x maxlen.
#include <cstdint>
#include <vector>

namespace attn::train {

/// Batches of `batch_size` (the last may be smaller) over `rows`.
///   bucket:  rows sorted by length (ties in random order), cut into batches, batches shuffled;
///   !bucket: rows shuffled, cut into batches.
/// shuffle=false keeps the order (and skips the randomness) for evaluation. Same seed, same batches.
std::vector<std::vector<std::int64_t>> make_batches(const std::vector<std::int64_t>& rows,
                                                    const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                                                    bool bucket, bool shuffle, std::uint64_t seed);

}  // namespace attn::train
