#pragma once
// Element-wise single-precision math for attn's CPU kernels (fused_lstm.cpp, fused_attention.cpp,
// train/adam.cpp): written so that GCC vectorises the loops that call it, and built for AVX-512,
// AVX2 and the baseline, the best chosen when the program starts. Internal to lib/.
#include <algorithm>
#include <cstdint>
#include <cstring>

/// On a function: clones of it for AVX-512, AVX2 and the baseline, chosen at start-up (GCC, x86-64).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(ATTN_NO_TARGET_CLONES)
#define ATTN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTN_VECTOR_CLONES
#endif

namespace attn::nn::vector_math {

/// Branch-free exp (Cody-Waite reduction and Cephes' polynomial): relative error below 2e-7.
__attribute__((always_inline)) inline float exp_approx(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;             // x - n ln 2, in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(n) + 127) << 23;  // 2^n
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return e * scale;
}
__attribute__((always_inline)) inline float sigmoid(float x) { return 1.0f / (1.0f + exp_approx(-x)); }
__attribute__((always_inline)) inline float tanh_approx(float x) { return 2.0f * sigmoid(2.0f * x) - 1.0f; }

}  // namespace attn::nn::vector_math
