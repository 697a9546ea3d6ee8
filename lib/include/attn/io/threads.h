#pragma once
/// The thread count for LibTorch's intra-op pool (it defaults to 1 on some machines). How freed
/// memory is kept: memory.h.
namespace attn::io {

/// Sets LibTorch's intra-op thread count; n <= 0 means one per hardware thread.
void set_torch_threads(int n);

}  // namespace attn::io
