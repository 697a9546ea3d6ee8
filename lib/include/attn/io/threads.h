#pragma once
/// Thread count for LibTorch's intra-op pool (it defaults to 1 on some machines).
namespace attn::io {

/// Number of hardware threads (at least 1).
int hardware_threads();
/// Sets LibTorch's intra-op thread count; n <= 0 means hardware_threads().
void set_torch_threads(int n);

}  // namespace attn::io
