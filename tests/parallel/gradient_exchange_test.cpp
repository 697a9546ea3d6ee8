// The gradient exchange (parallel/gradient_exchange.h) between two workers (threads of this
// process): each worker's gradients summed into every worker's, the word-vector table's rows sent
// only as its share touched them, and a stop asked by one worker known to both.
#include <torch/script.h>
#include <catch2/catch.hpp>

#include "attn/parallel/gradient_exchange.h"
#include "parallel_test_util.h"

using namespace attn;

TEST_CASE("a worker's share of a batch: every world-th row from its rank on", "[parallel][exchange]") {
  const std::vector<std::int64_t> rows = {10, 11, 12, 13, 14};
  CHECK(parallel::share_of(rows, 0, 2) == std::vector<std::int64_t>{10, 12, 14});
  CHECK(parallel::share_of(rows, 1, 2) == std::vector<std::int64_t>{11, 13});
  CHECK(parallel::share_of({7}, 1, 2).empty());
}

TEST_CASE("two workers end a step with the sum of their gradients, sparse or dense, and one's stop is both's", "[parallel][exchange]") {
  for (const bool sparse : {false, true}) {
    INFO("sparse " << sparse);
    std::vector<torch::Tensor> dense(2), table(2);
    std::vector<bool> stopped(2);
    std::vector<double> bytes(2);
    const auto errors = testing::two_workers(std::chrono::seconds(60), [&](int rank, parallel::Workers& workers) {
      const auto r = static_cast<std::size_t>(rank);
      torch::Tensor w = torch::zeros({2, 3}).requires_grad_(), words = torch::zeros({2048, 4}).requires_grad_();
      w.mutable_grad() = torch::full({2, 3}, static_cast<float>(rank + 1));
      // Worker r's share reads word rows 10 + r and 100: its gradient is there only.
      torch::Tensor g = torch::zeros({2048, 4});
      g[10 + rank] = torch::full({4}, 1.0f);
      g[100] = torch::full({4}, static_cast<float>(rank + 1));
      words.mutable_grad() = g;
      const auto word_ids = [](const std::vector<std::int64_t>& rows) {
        std::vector<std::int64_t> ids;
        for (std::int64_t row : rows) ids.insert(ids.end(), {10 + row, 100});
        return torch::tensor(ids, torch::kInt64);
      };
      parallel::GradientExchange exchange(workers, {w, words}, 1, sparse, word_ids);
      const auto step = exchange.exchange({0, 1}, rank == 1);
      dense[r] = w.grad().clone();
      table[r] = words.grad().clone();
      stopped[r] = step.stop;
      bytes[r] = step.bytes;
    });
    REQUIRE(errors == std::vector<std::string>{"", ""});
    for (std::size_t r = 0; r < 2; ++r) {
      CHECK(dense[r].equal(torch::full({2, 3}, 3.0f)));
      CHECK(table[r][10].equal(torch::full({4}, 1.0f)));
      CHECK(table[r][11].equal(torch::full({4}, 1.0f)));
      CHECK(table[r][100].equal(torch::full({4}, 3.0f)));
      CHECK(table[r].sum().item<float>() == Approx(4 * (1 + 1 + 3)));
      CHECK(stopped[r]);
    }
    // Dense: the whole table goes; sparse: its touched rows only (each share's, gathered).
    if (sparse)
      CHECK(bytes[0] < 2048 * 4 * 4 / 10);
    else
      CHECK(bytes[0] >= 2048 * 4 * 4);
  }
}
