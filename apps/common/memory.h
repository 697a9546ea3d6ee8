#pragma once
/// Process-wide settings are the apps' to make, never the library's: a C++ program linking attn::attn
/// keeps its own allocator and thread settings. Each app's main applies its command's profile before
/// its one library call: how the heap keeps freed memory (here) and LibTorch's thread count
/// (torch_threads.h, for the apps that link LibTorch).
namespace attn::apps {

/// Which heaps (glibc arenas) threads allocate from.
enum class Heaps {
  kOne,        ///< one for all: a block one thread frees, any other reuses (a few compute threads
               ///< passing large tensors: training, scoring, explaining, preparing a corpus)
  kPerThread,  ///< glibc's default, one per thread up to 8 per core: no thread waits for another's
               ///< allocation (a server's many request threads; aggregate's threads, each making
               ///< its batch's explanations, many small blocks, at once)
};

/// Keeps freed memory in the process instead of returning each large tensor's pages to the kernel
/// and getting them back zeroed (a page fault per 4 KB) on the next batch. glibc's mallopt: no
/// block gets its own mmap, no trimming, 256 MB of top padding, and `heaps`. Call it before starting
/// threads (a thread keeps the heap it started with). For batch after batch of similar tensors.
/// Measured on one epoch of the main job's model (32k rows, batch 512, 2 threads; bench/speed/run_train_ab.py
/// records the faults): glibc's defaults 1.1 M page faults and 8.5-8.7 s; kOne 0.36-0.54 M, 7.2-7.9 s.
void keep_freed_memory(Heaps heaps);

}  // namespace attn::apps
