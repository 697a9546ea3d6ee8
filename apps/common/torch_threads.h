#pragma once
/// LibTorch's intra-op thread count, for the apps that link LibTorch (a header, so that the torch-free
/// apps' common code stays torch-free). See memory.h: process-wide settings are the apps' to make.
#include <algorithm>
#include <thread>

#include <ATen/Parallel.h>

namespace attn::apps {

/// n threads (n <= 0: every core). LibTorch's default on this platform is 1.
inline void set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
}

}  // namespace attn::apps
