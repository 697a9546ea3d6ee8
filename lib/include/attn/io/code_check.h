#pragma once
/// A check of a TorchScript code record (code/*.py in a saved module) before LibTorch compiles it.
/// LibTorch 1.13 reads a class-level `name = value` that has no type annotation as a class constant
/// and then dereferences the missing annotation (a crash; later versions raise an error instead).
/// TorchScript's printer writes such untyped assignments only for the class's metadata lists
/// (`__parameters__`, `__buffers__`, `__annotations__`, `__forward_hooks__`,
/// `__forward_pre_hooks__`); any other is refused here. libFuzzer found the crash with a mutated
/// model.pt whose code still carried a matching CRC-32. It does not parse the code otherwise.
#include <string>
#include <string_view>

namespace attn::io {

/// Throws std::runtime_error "WHAT line N: class attribute 'NAME' has no type: the file is corrupt"
/// for an untyped class-level assignment other than the metadata lists.
void check_torchscript_code(std::string_view code, const std::string& what);

}  // namespace attn::io
