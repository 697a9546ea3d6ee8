#pragma once
/// A structural check of a pickle (protocol 0-5) before LibTorch's unpickler sees it: every opcode
/// is known, every length-prefixed argument fits in the bytes that remain, and no memo index
/// exceeds the pickle's size (picklers number memo entries from 0). LibTorch 1.13's
/// unpickler allocates and zero-fills whatever length a corrupt file claims (a 6 KB model.pt
/// whose string length reads 2.4 GB took 2.5 GB of memory before failing) and grows its memo
/// table to any index a LONG_BINPUT names (2^31 entries: 31 GB); this refuses such a file in
/// microseconds instead. It does not interpret the pickle.
#include <string>
#include <string_view>

namespace attn::io {

/// Throws std::runtime_error "WHAT: corrupt pickle at byte N: ..." unless `bytes` is a sequence of
/// well-formed opcodes ending with STOP.
void check_pickle(std::string_view bytes, const std::string& what);

}  // namespace attn::io
