#pragma once
/// `data.pt`, the padded token matrix `attn prepare` writes: a dict saved with torch::pickle_save,
/// so Python reads it with `torch.load(path)` and C++ with torch::pickle_load. Keys:
///   "format"      "attn.prepared/1"
///   "x"           int32 [rows, maxlen]   padded word indices (0 = padding)
///   "lengths"     int64 [rows]           tokens kept in each row
///   "labels"      float32 [rows, labels] 0/1 targets (absent for an unlabelled file)
///   "label_names" list[str]
///   "ids"         list[str]              row ids (the CSV's id column)
///   "padding"     "pre" or "post"        where the padding of "x" is
/// Writing is torch-free (attn_core); reading uses LibTorch (attn/io/prepared_data_reader.h).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/text/padding.h"

namespace attn::io {

inline constexpr const char* kPreparedFormat = "attn.prepared/1";

struct PreparedData {
  text::PaddedSequences x;
  std::vector<std::string> label_names;
  std::vector<float> labels;  ///< row-major [x.rows, label_names.size()]
  std::vector<std::string> ids;
  text::Side padding = text::Side::kPre;  ///< where x's padding is (its real tokens are at the other end)
};

/// Writes data.pt to `path` (torch.save's format, see attn/io/torch_save.h), with `threads` making
/// and checksumming its chunks. When data.x holds only its shape (text::pad_shape: ids empty),
/// `x_rows(first, count, out)` writes its rows [first, first + count) to out as they are needed.
using XRows = std::function<void(std::int64_t first, std::int64_t count, std::int32_t* out)>;
void write_prepared(const std::string& path, const PreparedData& data, int threads = 1, const XRows& x_rows = {});

}  // namespace attn::io
