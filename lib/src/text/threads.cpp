#include "attn/text/threads.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace attn::text {

void on_threads(std::size_t workers, const std::function<void(std::size_t w)>& work) {
  if (workers <= 1) {
    work(0);
    return;
  }
  std::vector<std::exception_ptr> errors(workers);
  const auto guarded = [&](std::size_t w) {
    try {
      work(w);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(guarded, w);
  guarded(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void on_ranges(std::size_t n, std::size_t workers, const std::function<void(std::size_t begin, std::size_t end)>& body) {
  if (n == 0) return;
  workers = std::max<std::size_t>(1, std::min(workers, n));
  on_threads(workers, [&](std::size_t w) { body(n * w / workers, n * (w + 1) / workers); });
}

}  // namespace attn::text
