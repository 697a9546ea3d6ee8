#include "memory.h"

#include <malloc.h>

namespace attn::apps {

void keep_freed_memory(Heaps heaps) {
  mallopt(M_MMAP_MAX, 0);                             // no block gets a mapping of its own (unmapped, and zeroed again, on free)
  if (heaps == Heaps::kOne) mallopt(M_ARENA_MAX, 1);  // threads started from now on share the main heap
  // The heap's top is never given back (-1: no trimming; a threshold of 1 GB still let glibc give
  // back 800 MB after the largest batch of an epoch, refaulted over the next steps) ...
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_TOP_PAD, 256 << 20);  // ... and grows in 256 MB steps
}

}  // namespace attn::apps
