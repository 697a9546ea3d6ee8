#include "attn/io/threads.h"

#include "attn/io/checksum.h"

#include <malloc.h>

#include <thread>

#include <torch/torch.h>

namespace attn::io {

void set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
}

std::string tensor_checksum(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().cpu().contiguous();
  std::string header = c10::toString(c.scalar_type());
  for (const auto d : c.sizes()) header += ":" + std::to_string(d);
  const std::uint32_t crc = crc32_update(0, header);
  return checksum_hex(crc32_update(crc, std::string_view(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size())));
}

void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

}  // namespace attn::io
