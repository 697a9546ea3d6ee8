#include "attn/io/threads.h"

#include <thread>

#include <torch/torch.h>

namespace attn::io {

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void set_torch_threads(int n) { torch::set_num_threads(n <= 0 ? hardware_threads() : n); }

}  // namespace attn::io
