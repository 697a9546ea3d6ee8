#pragma once
/// Writes files in the format of Python's `torch.save` (the zip format, file version 3) without
/// LibTorch, so torch-free commands (`attn prepare`) stay fast to start. Python reads the result
/// with `torch.load(path)`, C++ with `torch::pickle_load`.
///
/// The format: a zip archive (entries stored, data 64-byte aligned) holding
///   archive/data.pkl   a protocol-2 pickle of the object; each tensor is
///                      torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())
///                      with the storage a persistent id ('storage', torch.<T>Storage, key, 'cpu', numel)
///   archive/data/KEY   the raw little-endian bytes of each storage
///   archive/version    "3\n"
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace attn::io {

/// A contiguous CPU tensor to save; `data` must stay valid until the write returns.
struct TensorView {
  enum class DType { kInt32, kInt64, kFloat32 };
  /// Instead of `data`: writes the rows [first, first + count) of the tensor (rows: along its first
  /// dimension) to `out`. Called from several threads at once, for disjoint rows.
  using Rows = std::function<void(std::int64_t first, std::int64_t count, void* out)>;
  DType dtype;
  const void* data;
  std::vector<std::int64_t> shape;
  Rows rows = {};
};

/// The values a saved dict can hold: a string, a tensor, or a list of strings.
using TorchSaveValue = std::variant<std::string, TensorView, std::vector<std::string>>;

/// Writes `{key: value, ...}` (keys in the given order) to `path` as torch.save would.
/// Throws std::runtime_error naming the path on I/O errors, and for archives beyond 4 GiB (zip64
/// is not written). `threads` produce and checksum a large tensor's chunks (about 1 MB each) at
/// once, while one of them writes the chunk that is next in the file.
void write_torch_dict(const std::string& path, const std::vector<std::pair<std::string, TorchSaveValue>>& entries, int threads = 1);

}  // namespace attn::io
