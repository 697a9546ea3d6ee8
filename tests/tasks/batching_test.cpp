// Batches: bucketed by length, shuffled by seed, scored back into row order.
#include <algorithm>
#include <mutex>

#include <torch/script.h>
#include <torch/utils.h>
#include <catch2/catch.hpp>

#include "attn/tasks/batching.h"

using namespace attn;
using tasks::BatchPlan;

TEST_CASE("make_batches: every row once, buckets hold similar lengths, seeded", "[tasks][batching]") {
  std::vector<std::int64_t> lengths, rows;
  for (int i = 0; i < 1000; ++i) {
    lengths.push_back((i * 37) % 200);
    rows.push_back(i);
  }
  const auto a = tasks::make_batches(rows, lengths, BatchPlan{64, BatchPlan::Grouping::kByLength, 7});
  const auto b = tasks::make_batches(rows, lengths, BatchPlan{64, BatchPlan::Grouping::kByLength, 7});
  const auto c = tasks::make_batches(rows, lengths, BatchPlan{64, BatchPlan::Grouping::kByLength, 8});
  CHECK(a == b);
  CHECK(a != c);
  std::vector<int> seen(1000, 0);
  for (const auto& batch : a) {
    std::int64_t lo = 1000, hi = -1;
    for (auto r : batch) {
      ++seen[static_cast<std::size_t>(r)];
      lo = std::min(lo, lengths[static_cast<std::size_t>(r)]);
      hi = std::max(hi, lengths[static_cast<std::size_t>(r)]);
    }
    CHECK(hi - lo <= 15);  // 64 of 1000 rows spread over 200 lengths: a narrow band
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  // Unshuffled and ungrouped: the rows in order.
  const auto plain = tasks::make_batches(rows, lengths, BatchPlan{400, BatchPlan::Grouping::kAsGiven, std::nullopt});
  REQUIRE(plain.size() == 3);
  CHECK(plain[2].size() == 200);
  CHECK(plain[1].front() == 400);
  CHECK_THROWS_AS(tasks::make_batches(rows, lengths, BatchPlan{0, BatchPlan::Grouping::kAsGiven, std::nullopt}), std::invalid_argument);
}

TEST_CASE("for_each_bucket: buckets by length, and positions put results back in the order of the rows", "[tasks][batching]") {
  const std::vector<std::int64_t> lengths = {5, 1, 4, 2, 3};
  const std::vector<std::int64_t> rows = {4, 0, 3};  // a subset, in any order
  std::vector<std::int64_t> placed(rows.size(), -1);
  int batches = 0;
  tasks::for_each_bucket(rows, lengths, 2, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    ++batches;
    for (std::size_t i = 0; i < batch.size(); ++i) placed[at[i]] = batch[i];
  });
  CHECK(batches == 2);
  CHECK(placed == rows);
  // A long row does not make a batch of short ones pay its length.
  std::vector<std::vector<std::int64_t>> seen;
  tasks::for_each_bucket({0, 1, 2, 3}, {5, 200, 3, 4}, 64,
                         [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>&) { seen.push_back(batch); });
  CHECK(seen == std::vector<std::vector<std::int64_t>>{{2, 3, 0}, {1}});
}

TEST_CASE("for_each_bucket_at_once: for_each_bucket's batches, each once, results in the order of the rows", "[tasks][batching]") {
  const int before = torch::get_num_threads();
  torch::set_num_threads(2);
  std::vector<std::int64_t> lengths, rows;
  for (int i = 0; i < 300; ++i) {
    lengths.push_back((i * 37) % 120);
    rows.push_back(299 - i);
  }
  std::vector<std::vector<std::int64_t>> one_by_one, at_once;
  std::vector<std::int64_t> placed(rows.size(), -1);
  std::mutex mutex;
  tasks::for_each_bucket(rows, lengths, 16,
                         [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>&) { one_by_one.push_back(batch); });
  tasks::for_each_bucket_at_once(rows, lengths, 16, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const std::lock_guard<std::mutex> lock(mutex);
    at_once.push_back(batch);
    for (std::size_t i = 0; i < batch.size(); ++i) placed[at[i]] = batch[i];
  });
  torch::set_num_threads(before);
  std::sort(one_by_one.begin(), one_by_one.end());
  std::sort(at_once.begin(), at_once.end());
  CHECK(at_once == one_by_one);
  CHECK(placed == rows);
}

TEST_CASE("batch_ids: trimmed to the longest row, real tokens kept at the padded side's opposite end", "[tasks][batching]") {
  const text::PaddedSequences pre = text::pad_sequences(std::vector<text::Sequence>{{1, 2, 3}, {4}}, text::PadOptions{4});
  CHECK(torch::equal(tasks::batch_ids(pre, {1}, tasks::Width::kLongestRow, text::Side::kPre), torch::tensor({{4}}, torch::kInt64)));
  CHECK(torch::equal(tasks::batch_ids(pre, {0, 1}, tasks::Width::kLongestRow, text::Side::kPre),
                     torch::tensor({{1, 2, 3}, {0, 0, 4}}, torch::kInt64)));
  CHECK(tasks::batch_ids(pre, {1}, tasks::Width::kData, text::Side::kPre).size(1) == 4);
  text::PadOptions post_options{4};
  post_options.padding = text::Side::kPost;
  const text::PaddedSequences post = text::pad_sequences(std::vector<text::Sequence>{{1, 2, 3}, {4}}, post_options);
  CHECK(torch::equal(tasks::batch_ids(post, {1, 0}, tasks::Width::kLongestRow, text::Side::kPost),
                     torch::tensor({{4, 0, 0}, {1, 2, 3}}, torch::kInt64)));
}
