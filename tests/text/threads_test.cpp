// The torch-free layers' worker threads (attn/text/threads.h): every worker runs once, at the same
// time as the others (a latch only they can open), ranges cover their span once, errors come back.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/text/threads.h"

using attn::text::on_ranges;
using attn::text::on_threads;

TEST_CASE("on_threads runs every worker once, all at the same time", "[text][threads]") {
  const std::size_t n = 4;
  std::vector<int> runs(n, 0);
  std::mutex mutex;
  std::condition_variable all_in;
  std::size_t arrived = 0;
  on_threads(n, [&](std::size_t w) {
    std::unique_lock<std::mutex> lock(mutex);
    ++runs[w];
    if (++arrived == n) all_in.notify_all();
    all_in.wait(lock, [&] { return arrived == n; });  // returns only if every worker runs at once
  });
  CHECK(runs == std::vector<int>(n, 1));
}

TEST_CASE("on_threads with one worker runs it on the calling thread; errors are rethrown", "[text][threads]") {
  const auto caller = std::this_thread::get_id();
  bool same = false;
  on_threads(1, [&](std::size_t w) { same = w == 0 && std::this_thread::get_id() == caller; });
  CHECK(same);
  std::atomic<int> finished{0};
  CHECK_THROWS_WITH(on_threads(3,
                               [&](std::size_t w) {
                                 if (w >= 1) throw std::runtime_error("worker " + std::to_string(w));
                                 ++finished;
                               }),
                    "worker 1");
  CHECK(finished == 1);  // the others ran to their end first
}

TEST_CASE("on_ranges covers [0, n) once in contiguous ranges, with no more workers than items", "[text][threads]") {
  for (const std::size_t n : {0, 1, 3, 10, 1001}) {
    std::vector<std::atomic<int>> seen(n);
    std::atomic<int> calls{0};
    on_ranges(n, 4, [&](std::size_t begin, std::size_t end) {
      CHECK(begin < end);
      ++calls;
      for (std::size_t i = begin; i < end; ++i) ++seen[i];
    });
    for (const auto& s : seen) CHECK(s == 1);
    CHECK(calls == static_cast<int>(std::min<std::size_t>(n, 4)));
  }
}
