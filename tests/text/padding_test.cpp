#include <catch2/catch.hpp>

#include "attn/text/padding.h"

using namespace attn::text;

namespace {
std::vector<std::vector<std::int32_t>> rows_of(const PaddedSequences& p) {
  std::vector<std::vector<std::int32_t>> out;
  for (std::int64_t r = 0; r < p.rows; ++r) out.emplace_back(p.ids.begin() + r * p.cols, p.ids.begin() + (r + 1) * p.cols);
  return out;
}
}  // namespace

TEST_CASE("pad_sequences defaults: pre padding, pre truncating (long rows keep their end)", "[padding]") {
  PadOptions o;
  o.maxlen = 3;
  const auto p = pad_sequences(std::vector<Sequence>{{1, 2, 3, 4, 5}, {6}, {}}, o);
  CHECK(rows_of(p) == std::vector<std::vector<std::int32_t>>{{3, 4, 5}, {0, 0, 6}, {0, 0, 0}});
  CHECK(p.lengths == std::vector<std::int64_t>{3, 1, 0});
  CHECK(p.truncated_tokens == 2);
}

TEST_CASE("pad_sequences post/post and a fill value", "[padding]") {
  PadOptions o;
  o.maxlen = 3;
  o.padding = Side::kPost;
  o.truncating = Side::kPost;
  o.value = -1;
  CHECK(rows_of(pad_sequences(std::vector<Sequence>{{1, 2, 3, 4}, {5}}, o)) == std::vector<std::vector<std::int32_t>>{{1, 2, 3}, {5, -1, -1}});
  o.padding = Side::kPre;
  CHECK(rows_of(pad_sequences(std::vector<Sequence>{{1, 2, 3, 4}, {5}}, o)) == std::vector<std::vector<std::int32_t>>{{1, 2, 3}, {-1, -1, 5}});
}

TEST_CASE("pad_sequences without maxlen uses the longest row", "[padding]") {
  const auto p = pad_sequences(std::vector<Sequence>{{1, 2}, {3, 4, 5}, {}});
  CHECK(p.cols == 3);
  CHECK(rows_of(p) == std::vector<std::vector<std::int32_t>>{{0, 1, 2}, {3, 4, 5}, {0, 0, 0}});
  CHECK(pad_sequences(std::vector<Sequence>{{}, {}}).cols == 0);
}

TEST_CASE("pad options are validated", "[padding]") {
  PadOptions o;
  o.maxlen = 0;
  CHECK_THROWS_AS(pad_sequences(std::vector<Sequence>{{1}}, o), std::invalid_argument);
  CHECK_THROWS_WITH(parse_side("middle", "--padding"), Catch::Contains("--padding must be 'pre' or 'post'"));
}
