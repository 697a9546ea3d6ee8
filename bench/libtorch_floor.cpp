// The floor of every LibTorch program's start-up (bench/speed/perf_explain.py): load LibTorch, add two
// numbers, print, exit. attn explain's start-up is measured against this.
#include <iostream>

#include <ATen/ATen.h>

int main() {
  const at::Tensor one = at::ones({1});
  std::cout << (one + one).item<float>() << "\n";
}
