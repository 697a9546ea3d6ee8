#pragma once
/// Checks on tensors and LibTorch archives read from files, so that a corrupt or hostile file ends
/// in an error naming it rather than in a crash or a silent wrong answer.
#include <string>

#include <torch/types.h>

namespace attn::io {

/// The checksum (io/checksum.h) of a tensor's values: its dtype and shape, then its bytes.
std::string tensor_checksum(const torch::Tensor& t);

/// Throws std::runtime_error "WHAT: tensor 'NAME' ..." unless every element the tensor's shape,
/// strides and offset address lies inside its storage (LibTorch's unpickler takes them from the
/// file unchecked, so a corrupt shape would read past the end of the data).
void require_in_storage(const torch::Tensor& t, const std::string& what, const std::string& name);

/// Checks a LibTorch zip archive (model.pt, checkpoint.pt, data.pt) before LibTorch unpickles it:
/// the zip directory is readable, the records LibTorch parses (code, pickles, version) match their
/// CRC-32 (io/zip_records.h), and every pickle in it (data, constants, debug info) is well formed
/// (io/pickle_check.h).
/// Throws std::runtime_error "PATH: not EXPECTED (reason)", e.g. expected = "a TorchScript model file".
void check_archive(const std::string& path, const std::string& expected = "a LibTorch archive");
/// The same for an archive held in memory; errors name `what`.
void check_archive_bytes(const std::string& bytes, const std::string& what, const std::string& expected = "a LibTorch archive");

}  // namespace attn::io
