#include "torch_threads.h"

#include <algorithm>
#include <thread>

#include <ATen/Parallel.h>

namespace attn::apps {

void set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
}

}  // namespace attn::apps
