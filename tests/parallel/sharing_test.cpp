// Workers sharing the scoring of rows (parallel/sharing.h): alone, one call with every row; two workers
// (threads of this process, c10d/Gloo) take whole batches, each once, and end with every row's
// outputs and texts in the rows' order.
#include <catch2/catch.hpp>

#include "attn/parallel/sharing.h"
#include "parallel_test_util.h"

using namespace attn;

TEST_CASE("shared scoring alone: one call with every row, in their order", "[parallel][sharing]") {
  const std::vector<std::int64_t> rows = {4, 2, 9};
  parallel::SharedScoring alone(rows, {{0}, {1, 2}}, nullptr);
  std::vector<std::vector<std::int64_t>> calls;
  const auto out = alone.scores([&](const std::vector<std::int64_t>& some) {
    calls.push_back(some);
    return std::vector<float>{40, 20, 90};
  });
  CHECK(calls == std::vector<std::vector<std::int64_t>>{rows});
  CHECK(out == std::vector<float>{40, 20, 90});
  CHECK(alone.texts({"d", "b", "i"}) == std::vector<std::string>{"d", "b", "i"});
}

TEST_CASE("two workers share a scoring: each batch scored once, every row's outputs and texts gathered in order", "[parallel][sharing]") {
  const std::vector<std::int64_t> rows = {7, 3, 8, 1, 9, 0, 5, 2, 6, 4};
  const std::vector<std::vector<std::size_t>> batches = {{0, 1}, {2, 3, 4}, {5}, {6, 7, 8, 9}};  // positions in rows
  std::vector<std::vector<float>> gathered(2), scores(2);
  std::vector<std::vector<std::string>> bytes(2), texts(2);
  std::vector<std::size_t> scored(2, 0);
  const auto errors = testing::two_workers(std::chrono::seconds(60), [&](int rank, parallel::Workers& workers) {
    const auto r = static_cast<std::size_t>(rank);
    const parallel::WorkerSharing sharing(workers);
    gathered[r] = sharing.gather(rank == 0 ? std::vector<float>{1} : std::vector<float>{2, 3});
    bytes[r] = sharing.gather_bytes(rank == 0 ? "zero" : "");
    parallel::SharedScoring shared(rows, batches, &sharing);
    std::vector<std::string> mine;
    scores[r] = shared.scores([&](const std::vector<std::int64_t>& some) {
      std::vector<float> out;
      for (std::int64_t row : some) {
        out.insert(out.end(), {static_cast<float>(row * 10), static_cast<float>(row * 10 + 1)});
        mine.push_back("row " + std::to_string(row));
      }
      scored[r] += some.size();
      return out;
    });
    texts[r] = shared.texts(mine);
  });
  REQUIRE(errors == std::vector<std::string>{"", ""});
  std::vector<float> expected;
  std::vector<std::string> expected_texts;
  for (std::int64_t row : rows) {
    expected.insert(expected.end(), {static_cast<float>(row * 10), static_cast<float>(row * 10 + 1)});
    expected_texts.push_back("row " + std::to_string(row));
  }
  CHECK(scored[0] + scored[1] == rows.size());  // each batch once, by whichever worker took it
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(gathered[r] == std::vector<float>{1, 2, 3});  // rank order, lengths that differ
    CHECK(bytes[r] == std::vector<std::string>{"zero", ""});
    CHECK(scores[r] == expected);
    CHECK(texts[r] == expected_texts);
  }
}
