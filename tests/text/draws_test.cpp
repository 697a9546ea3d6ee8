// The text layer's seeded draws: SplitMix64's published sequence, the same for the same seed, in range.
#include <catch2/catch.hpp>

#include "text/draws.h"

using namespace attn;

TEST_CASE("draws: SplitMix64's sequence, repeatable, in range", "[draws]") {
  text::Draws zero(0);
  CHECK(zero.next() == 0xE220A8397B1DCDAFull);  // SplitMix64's first output from state 0 (Vigna's reference code)
  text::Draws a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next();
    CHECK(x == b.next());
    CHECK(x != c.next());
  }
  text::Draws d(7);
  for (int i = 0; i < 1000; ++i) {
    CHECK(d.below(5) < 5);
    const double u = d.uniform();
    CHECK((u >= 0.0 && u < 1.0));
  }
}
