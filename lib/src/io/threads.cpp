#include "attn/io/threads.h"

#include <malloc.h>

#include <thread>

#include <torch/torch.h>

namespace attn::io {

void set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
}

void keep_freed_memory(Heaps heaps) {
  mallopt(M_MMAP_MAX, 0);  // no block gets a mapping of its own (unmapped, and zeroed again, on free)
  if (heaps == Heaps::kOne) mallopt(M_ARENA_MAX, 1);  // threads started from now on share the main heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // the heap's top is not given back ...
  mallopt(M_TOP_PAD, 256 << 20);       // ... and grows in 256 MB steps
}

}  // namespace attn::io
