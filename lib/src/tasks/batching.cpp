#include "attn/tasks/batching.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include <torch/script.h>

#include "attn/parallel/threads.h"
#include "attn/text/subwords.h"

namespace attn::tasks {

std::vector<std::vector<std::int64_t>> make_batches(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths,
                                                    const BatchPlan& plan) {
  if (plan.batch_size < 1) throw std::invalid_argument("batch size must be >= 1");
  const bool bucket = plan.grouping == BatchPlan::Grouping::kByLength;
  std::vector<std::int64_t> order = rows;
  std::mt19937_64 rng(plan.shuffle_seed.value_or(0));
  if (plan.shuffle_seed) std::shuffle(order.begin(), order.end(), rng);
  if (bucket)
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return lengths[static_cast<std::size_t>(a)] < lengths[static_cast<std::size_t>(b)];
    });
  std::vector<std::vector<std::int64_t>> batches;
  const auto size = static_cast<std::size_t>(plan.batch_size);
  for (std::size_t i = 0; i < order.size(); i += size)
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + size)));
  if (plan.shuffle_seed && bucket) std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

namespace {

/// for_each_bucket_at_once runs batches at once from this many per thread. Measured with
/// `attn faithfulness` (150 rows, 5 methods, 2 threads; medians of 3 alternated runs): 9.1 s one
/// batch at a time, 7.7 s from 2 per thread, 8.9 s from 4 and 10.7 s from any 2 batches (its three
/// batches of explanations).
constexpr int kBatchesPerThread = 2;

/// One scoring batch: its rows, and their places in the rows asked for.
struct Bucket {
  std::vector<std::int64_t> rows;
  std::vector<std::size_t> positions;
};

/// The batches for_each_bucket scores, in its order.
std::vector<Bucket> buckets(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be >= 1");
  // Positions by row id: rows may be any subset of the data, in any order (ids are distinct).
  std::vector<std::size_t> position_of(lengths.size());
  for (std::size_t i = 0; i < rows.size(); ++i) position_of[static_cast<std::size_t>(rows[i])] = i;
  std::vector<std::int64_t> order = rows;
  const auto length = [&](std::int64_t r) { return lengths[static_cast<std::size_t>(r)]; };
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return length(a) < length(b); });
  // Rows shortest first; a batch ends when full, or before a row that would make it mostly padding
  // (its width times its rows more than twice its real tokens, with some slack for short rows): a
  // few long texts in a small batch do not make every short one pay their length.
  std::vector<Bucket> out;
  Bucket batch;
  std::int64_t real = 0;
  const auto flush = [&] {
    if (!batch.rows.empty()) out.push_back(std::move(batch));
    batch = Bucket();
    real = 0;
  };
  for (std::int64_t r : order) {
    const std::int64_t n = length(r), count = static_cast<std::int64_t>(batch.rows.size()) + 1;
    if (static_cast<std::int64_t>(batch.rows.size()) == batch_size || n * count > 2 * (real + n) + 64) flush();
    batch.rows.push_back(r);
    batch.positions.push_back(position_of[static_cast<std::size_t>(r)]);
    real += n;
  }
  flush();
  return out;
}

}  // namespace

void for_each_bucket(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                     const std::function<void(const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& positions)>& score) {
  for (const Bucket& b : buckets(rows, lengths, batch_size)) score(b.rows, b.positions);
}

void for_each_bucket_at_once(
    const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
    const std::function<void(const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& positions)>& score) {
  const std::vector<Bucket> all = buckets(rows, lengths, batch_size);
  // Few batches: one after the other, each split over the threads, as for_each_bucket runs them
  // (two or three batches on two threads would leave one idle through the last).
  if (all.size() < static_cast<std::size_t>(kBatchesPerThread * parallel::available_threads())) {
    for (const Bucket& b : all) score(b.rows, b.positions);
    return;
  }
  // The longest batches first (they come last), so that no thread is left with one at the end.
  parallel::for_each_task(all.size(), [&](std::size_t i) {
    const Bucket& b = all[all.size() - 1 - i];
    score(b.rows, b.positions);
  });
}

torch::Tensor batch_ids(const text::PaddedSequences& x, const std::vector<std::int64_t>& rows, Width width_mode, text::Side padding) {
  std::int64_t width = x.cols;
  if (width_mode == Width::kLongestRow) {
    width = 1;
    for (std::int64_t r : rows) width = std::max(width, x.lengths[static_cast<std::size_t>(r)]);
    width = std::min(width, x.cols);
  }
  torch::Tensor out = torch::zeros({static_cast<std::int64_t>(rows.size()), width}, torch::kInt64);
  if (x.cols == 0) return out;
  auto* dst = out.data_ptr<std::int64_t>();
  const std::int64_t offset = padding == text::Side::kPre ? x.cols - width : 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int32_t* src = x.ids.data() + rows[i] * x.cols + offset;
    for (std::int64_t c = 0; c < width; ++c) dst[static_cast<std::int64_t>(i) * width + c] = src[c];
  }
  return out;
}

torch::Tensor model_ids(const text::PaddedSequences& x, const torch::Tensor& ids) {
  if (!x.subwords) return ids;
  const torch::Tensor flat = ids.contiguous();
  const std::int64_t* id = flat.data_ptr<std::int64_t>();
  const std::int64_t n = flat.numel();
  std::vector<std::vector<std::int32_t>> rows(static_cast<std::size_t>(n));
  std::size_t most = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    rows[static_cast<std::size_t>(i)] = x.subwords->rows(static_cast<std::int32_t>(id[i]));
    most = std::max(most, rows[static_cast<std::size_t>(i)].size());
  }
  const auto G = static_cast<std::int64_t>(most);
  torch::Tensor out = torch::zeros({ids.size(0), ids.size(1), 1 + G}, torch::kInt64);
  std::int64_t* o = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i, o += 1 + G) {
    o[0] = x.subwords->word_row(static_cast<std::int32_t>(id[i]));
    std::copy(rows[static_cast<std::size_t>(i)].begin(), rows[static_cast<std::size_t>(i)].end(), o + 1);
  }
  return out;
}

std::vector<std::int64_t> all_rows(std::int64_t n) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(std::max<std::int64_t>(0, n)));
  for (std::int64_t i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
  return rows;
}

}  // namespace attn::tasks
