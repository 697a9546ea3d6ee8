#pragma once
/// `data.pt`, the padded token matrix `attn prepare` writes: a dict saved with torch::pickle_save,
/// so Python reads it with `torch.load(path)` and C++ with torch::pickle_load. Keys:
///   "format"      "attn.prepared/1"
///   "x"           int32 [rows, maxlen]   padded word indices (0 = padding)
///   "lengths"     int64 [rows]           tokens kept in each row
///   "labels"      float32 [rows, labels] 0/1 targets (absent for an unlabelled file)
///   "label_names" list[str]
///   "ids"         list[str]              row ids (the CSV's id column)
/// This header is torch-free on purpose: callers pass plain vectors.
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
};

/// The bytes of data.pt.
std::vector<char> encode_prepared(const PreparedData& data);
/// Parses data.pt bytes; throws std::runtime_error naming `source` and the bad key.
PreparedData decode_prepared(const std::vector<char>& bytes, const std::string& source);

}  // namespace attn::io
