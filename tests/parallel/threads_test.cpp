// Work on LibTorch's threads: every index once, really on two threads, the caller's gradient mode,
// errors rethrown, nested work inline.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <torch/script.h>
#include <torch/utils.h>
#include <catch2/catch.hpp>

#include "attn/parallel/threads.h"

using namespace attn;

namespace {

/// LibTorch's thread count for one test case.
struct ThreadCount {
  explicit ThreadCount(int n) : before(torch::get_num_threads()) { torch::set_num_threads(n); }
  ~ThreadCount() { torch::set_num_threads(before); }
  int before;
};

/// Two parties meet: each waits for the other (at most a minute: a failure, not a hang, when the
/// work runs one task after the other).
class Meeting {
 public:
  bool arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    return changed_.wait_for(lock, std::chrono::minutes(1), [&] { return arrived_ >= 2; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
};

}  // namespace

TEST_CASE("for_each_range: ranges cover every index once, at least grain long, on two threads", "[parallel][threads]") {
  const ThreadCount two(2);
  std::mutex mutex;
  std::vector<int> seen(1000, 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::set<std::thread::id> threads;
  parallel::for_each_range(1000, 64, [&](std::int64_t begin, std::int64_t end) {
    const std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
    for (std::int64_t i = begin; i < end; ++i) ++seen[static_cast<std::size_t>(i)];
  });
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  CHECK(threads.size() == 2);  // compiled without OpenMP, at::parallel_for would be one plain loop
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t r = 0; r + 1 < ranges.size(); ++r) CHECK(ranges[r].second - ranges[r].first >= 64);
  // Too little to share: one call.
  int calls = 0;
  parallel::for_each_range(64, 64, [&](std::int64_t begin, std::int64_t end) {
    ++calls;
    CHECK((begin == 0 && end == 64));
  });
  CHECK(calls == 1);
  parallel::for_each_range(0, 1, [&](std::int64_t, std::int64_t) { FAIL("no index, no call"); });
}

TEST_CASE("for_each_task: every task once, two at a time, nested work inline", "[parallel][threads]") {
  const ThreadCount two(2);
  Meeting meeting;
  std::mutex mutex;
  std::vector<int> seen(40, 0);
  std::vector<int> nested_calls;
  parallel::for_each_task(40, [&](std::size_t i) {
    if (i < 2) CHECK(meeting.arrive());  // tasks 0 and 1 run at once, or neither gets past here
    int calls = 0;
    parallel::for_each_range(1000, 1, [&](std::int64_t, std::int64_t) { ++calls; });
    const std::lock_guard<std::mutex> lock(mutex);
    ++seen[i];
    nested_calls.push_back(calls);
  });
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  CHECK(std::all_of(nested_calls.begin(), nested_calls.end(), [](int n) { return n == 1; }));  // inside a task: one range
}

TEST_CASE("for_each_task and for_each_range: the caller's gradient mode on every thread", "[parallel][threads]") {
  const ThreadCount two(2);
  for (const bool grad : {false, true}) {
    const torch::AutoGradMode mode(grad);
    std::mutex mutex;
    std::vector<bool> modes;
    parallel::for_each_task(8, [&](std::size_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      modes.push_back(torch::GradMode::is_enabled());
    });
    parallel::for_each_range(1000, 100, [&](std::int64_t, std::int64_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      modes.push_back(torch::GradMode::is_enabled());
    });
    CHECK(modes.size() > 8);
    CHECK(std::all_of(modes.begin(), modes.end(), [&](bool m) { return m == grad; }));
  }
}

TEST_CASE("for_each_task and for_each_range: an error on a thread reaches the caller", "[parallel][threads]") {
  const ThreadCount two(2);
  const auto task = [](std::size_t i) {
    if (i == 3) throw std::invalid_argument("task 3 failed");
  };
  CHECK_THROWS_WITH(parallel::for_each_task(10, task), "task 3 failed");
  CHECK_THROWS_AS(parallel::for_each_range(1000, 10,
                                           [](std::int64_t begin, std::int64_t) {
                                             if (begin > 0) throw std::out_of_range("not the first range");
                                           }),
                  std::out_of_range);
}

TEST_CASE("for_each_task: one thread runs the tasks in order on the caller's thread", "[parallel][threads]") {
  const ThreadCount one(1);
  std::vector<std::size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  parallel::for_each_task(5, [&](std::size_t i) {
    CHECK(std::this_thread::get_id() == caller);
    order.push_back(i);
  });
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
}
