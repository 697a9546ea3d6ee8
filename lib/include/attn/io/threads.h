#pragma once
/// Process settings for LibTorch work: the thread count for LibTorch's intra-op pool (it defaults
/// to 1 on some machines), and how freed memory is kept.
namespace attn::io {

/// Sets LibTorch's intra-op thread count; n <= 0 means one per hardware thread.
void set_torch_threads(int n);

/// Keeps freed memory in the process (glibc's mallopt: no mmap below 32 MB, no trimming, 256 MB of
/// top padding) instead of returning each large tensor's pages to the kernel and getting them back
/// zeroed on the next batch. For long-running work on batches of similar sizes (a server).
void keep_freed_memory();

}  // namespace attn::io
