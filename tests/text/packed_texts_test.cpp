// PackedTexts: a block of texts in one buffer gives back each text exactly, empty ones included.
#include <catch2/catch.hpp>

#include "attn/text/packed_texts.h"

using attn::text::PackedTexts;

TEST_CASE("packed texts give back every text, empty and multi-byte ones included", "[packed_texts]") {
  const std::vector<std::string> texts = {"", "one", "", "h\xC3\xA9llo \"quoted\"\n,next", std::string("nul\0byte", 8), ""};
  PackedTexts p;
  CHECK(p.empty());
  p.reserve(2, 4);  // less room than needed: it grows
  for (const auto& t : texts) p.push_back(t);
  REQUIRE(p.size() == texts.size());
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(p[i] == texts[i]);
    bytes += texts[i].size();
  }
  CHECK(p.bytes() == bytes);
  PackedTexts moved = std::move(p);
  CHECK(moved[3] == texts[3]);
}
