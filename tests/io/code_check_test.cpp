#include "attn/io/code_check.h"

#include <catch2/catch.hpp>

using attn::io::check_torchscript_code;

namespace {

// What TorchScript's printer writes for a module class (LibTorch 1.13), shortened.
const char* kPrinted =
    "class Linear(Module):\n"
    "  __parameters__ = [\"weight\", \"bias\", ]\n"
    "  __buffers__ = []\n"
    "  weight : Tensor\n"
    "  bias : Tensor\n"
    "  training : bool\n"
    "  _is_full_backward_hook : Optional[bool]\n"
    "  eps : Final[float] = 1e-05\n"
    "  def forward(self: __torch__.attn.Linear,\n"
    "    x: Tensor) -> Tensor:\n"
    "    y = torch.linear(x, self.weight, self.bias)\n"
    "    z = [1,\n"
    "  w = 2]\n"
    "    return y\n";

}  // namespace

TEST_CASE("TorchScript code as LibTorch prints it passes", "[io][code]") {
  CHECK_NOTHROW(check_torchscript_code(kPrinted, "model.pt: code/attn.py"));
  CHECK_NOTHROW(check_torchscript_code("def f(x: int) -> int:\n  y = x\n  return y\n", "f.py"));  // functions may assign
  CHECK_NOTHROW(check_torchscript_code("", "empty.py"));
}

TEST_CASE("an untyped class attribute, which LibTorch 1.13 crashes on, is refused naming the record and line", "[io][code]") {
  // The fuzz finding: "__parameters__" mutated into "__perameters__" (a class constant without a type).
  const std::string mutated = "class Linear(Module):\n  __perameters__ = [\"weight\", \"bias\", ]\n  training : bool\n";
  CHECK_THROWS_WITH(check_torchscript_code(mutated, "model.pt: code/attn.py"),
                    "model.pt: code/attn.py line 2: class attribute '__perameters__' has no type: the file is corrupt");
  CHECK_THROWS_WITH(check_torchscript_code("class A(Module):\n\tx=1\n", "a.py"), Catch::Contains("line 2: class attribute 'x'"));
  // A comparison is not an assignment; a typed constant is fine.
  CHECK_NOTHROW(check_torchscript_code("class A(Module):\n  x == 1\n  y : Final[int] = 1\n", "a.py"));
}
