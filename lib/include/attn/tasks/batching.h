#pragma once
/// Cutting rows into batches. Bucketing puts rows of similar length together, so a batch needs
/// little or no padding and an epoch costs what its real tokens cost, not rows x maxlen.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "attn/text/padding.h"

namespace attn::tasks {

struct BatchPlan {
  enum class Grouping {
    kByLength,  ///< rows sorted by length (ties in random order when shuffled), then cut
    kAsGiven,   ///< rows in their (shuffled) order, then cut
  };
  std::int64_t batch_size = 512;
  Grouping grouping = Grouping::kByLength;
  /// Training: the rows, and then the batches, are shuffled with this seed (same seed, same
  /// batches). None keeps the given order (scoring).
  std::optional<std::uint64_t> shuffle_seed;
};

/// Batches of plan.batch_size (the last may be smaller) over `rows`; lengths[r] is row r's length.
std::vector<std::vector<std::int64_t>> make_batches(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths,
                                                    const BatchPlan& plan);

/// Scoring in length-bucketed batches: rows sorted by length, cut into batches of at most
/// `batch_size` that are at most about half padding; calls `score(batch, positions)` for each, where
/// positions[i] is the index of batch[i] in `rows`, so results land in the order of `rows`.
void for_each_bucket(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                     const std::function<void(const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& positions)>& score);

/// The batches of for_each_bucket, scored at once on the threads LibTorch may use: each batch on
/// one thread (parallel::for_each_task), the longest first, its own work single-threaded. One
/// batch's serial parts (dispatch, copies, the text handling) then overlap another's arithmetic,
/// where splitting every batch over the threads leaves them waiting on each other. For a `score`
/// that writes only its own rows' results, whose arithmetic does not depend on the thread it runs
/// on: then the results are for_each_bucket's to the bit. Fewer than 2 batches per thread run as
/// for_each_bucket runs them: with two or three on two threads, one thread would wait through the last.
void for_each_bucket_at_once(
    const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
    const std::function<void(const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& positions)>& score);

/// How wide a batch of padded rows is.
enum class Width {
  kLongestRow,  ///< as its longest row (length-bucketed training and scoring)
  kData,        ///< as the data (every row padded to maxlen)
};

/// The ids of `rows` of `x` as an int64 batch [rows, width] (width at least 1). Real tokens sit at
/// the end for pre padding, at the start for post padding.
torch::Tensor batch_ids(const text::PaddedSequences& x, const std::vector<std::int64_t>& rows, Width width, text::Side padding);
/// What a text model reads for ids [B, W] of `x`: the ids themselves, or, when x's ids are a
/// SubwordVocabulary's, [B, W, 1 + G]: each id's word row, then its n-gram rows, 0-padded to the
/// most n-grams of a word in the batch (models/subword_embedding.h reads them).
torch::Tensor model_ids(const text::PaddedSequences& x, const torch::Tensor& ids);

/// 0, 1, ..., n - 1.
std::vector<std::int64_t> all_rows(std::int64_t n);

}  // namespace attn::tasks
