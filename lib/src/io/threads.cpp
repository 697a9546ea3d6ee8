#include "attn/io/threads.h"

#include <thread>

#include <torch/torch.h>

namespace attn::io {

void set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
}

}  // namespace attn::io
