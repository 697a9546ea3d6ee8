// Work on LibTorch's threads (see threads.h). Compiled with OpenMP, as at::parallel_for needs.
#include "attn/parallel/threads.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>

namespace attn::parallel {

namespace {

/// The first error thrown on any thread, and whether one was.
class FirstError {
 public:
  template <class F>
  void run(const F& f) {
    try {
      f();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
    }
  }
  bool failed() const { return failed_; }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

bool one_thread() { return available_threads() < 2; }

}  // namespace

int available_threads() { return at::in_parallel_region() ? 1 : at::get_num_threads(); }

void for_each_range(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& f) {
  if (n <= 0) return;
  if (one_thread() || n <= grain) {
    f(0, n);
    return;
  }
  const at::ThreadLocalState caller;
  FirstError error;
  at::parallel_for(0, n, grain, [&](std::int64_t begin, std::int64_t end) {
    const at::ThreadLocalStateGuard state(caller);
    error.run([&] { f(begin, end); });
  });
  error.rethrow();
}

void for_each_task(std::size_t n, const std::function<void(std::size_t)>& f) {
  if (n < 2 || one_thread()) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  const at::ThreadLocalState caller;
  FirstError error;
  std::atomic<std::size_t> next{0};
  const auto threads = static_cast<std::int64_t>(std::min<std::size_t>(n, static_cast<std::size_t>(at::get_num_threads())));
  at::parallel_for(0, threads, 1, [&](std::int64_t, std::int64_t) {
    const at::ThreadLocalStateGuard state(caller);
    for (std::size_t i = next++; i < n && !error.failed(); i = next++) error.run([&] { f(i); });
  });
  error.rethrow();
}

}  // namespace attn::parallel
