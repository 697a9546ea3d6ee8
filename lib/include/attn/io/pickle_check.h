#pragma once
/// A structural check of a pickle (protocol 0-5) before LibTorch's unpickler sees it: every opcode
/// is known, every length-prefixed argument fits in the bytes that remain, no memo index exceeds
/// the pickle's size (picklers number memo entries from 0), and every persistent id is a tensor
/// storage's ('storage', torch.<Type>Storage, key, location, numel), which it returns. LibTorch
/// 1.13's unpickler allocates and zero-fills whatever length a corrupt file claims (a 6 KB
/// model.pt whose string length reads 2.4 GB took 2.5 GB of memory before failing), grows its memo
/// table to any index a LONG_BINPUT names (2^31 entries: 31 GB), and gives a storage the size its
/// numel states whatever its record holds (a record stated shorter was read past its end); this
/// refuses such a file in microseconds instead. It follows the stack only as far as finding the
/// storages takes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::io {

/// A tensor storage a pickle refers to: its bytes are the archive's record "<pickle's name>/<key>".
struct PickledStorage {
  std::string key;          ///< e.g. "0"
  std::string type;         ///< e.g. "FloatStorage"
  std::uint64_t numel = 0;  ///< its elements, as the pickle states
  std::uint64_t bytes = 0;  ///< numel times the type's element size
};

/// Throws std::runtime_error "WHAT: corrupt pickle at byte N: ..." unless `bytes` is a sequence of
/// well-formed opcodes ending with STOP whose persistent ids are all tensor storages of a known
/// type; returns those storages in the order they appear.
std::vector<PickledStorage> check_pickle(std::string_view bytes, const std::string& what);

}  // namespace attn::io
