#pragma once
/// Seeded draws that every platform repeats to the bit (misspellings, counterfactual copies):
/// SplitMix64 (Steele, Lea & Flood 2014), a whole 64-bit state. Internal to the text layer; no
/// LibTorch here.
#include <cstddef>
#include <cstdint>

namespace attn::text {

class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1), 53 bits
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

}  // namespace attn::text
