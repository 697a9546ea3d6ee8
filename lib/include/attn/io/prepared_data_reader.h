#pragma once
/// Reading data.pt in C++ (LibTorch's unpickler; part of attn_torch).
#include <string>

#include "attn/io/prepared_data.h"

namespace attn::io {

/// Reads data.pt; throws std::runtime_error naming `path` and the bad key.
PreparedData read_prepared(const std::string& path);

}  // namespace attn::io
