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
  CHECK(rows_of(pad_sequences(std::vector<Sequence>{{1, 2, 3, 4}, {5}}, o)) ==
        std::vector<std::vector<std::int32_t>>{{1, 2, 3}, {5, -1, -1}});
  o.padding = Side::kPre;
  CHECK(rows_of(pad_sequences(std::vector<Sequence>{{1, 2, 3, 4}, {5}}, o)) ==
        std::vector<std::vector<std::int32_t>>{{1, 2, 3}, {-1, -1, 5}});
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

TEST_CASE("pad_shape and pad_rows_into give pad_sequences' matrix, row range by row range", "[padding]") {
  SequenceBatch batch;  // lengths 0 to 11 and back: shorter, as long as and longer than maxlen 6
  for (int r = 0; r < 40; ++r) {
    const int n = r < 12 ? r : 40 - r;
    for (int k = 0; k < n; ++k) batch.ids.push_back(100 * r + k + 1);
    batch.offsets.push_back(static_cast<std::int64_t>(batch.ids.size()));
  }
  for (Side padding : {Side::kPre, Side::kPost})
    for (Side truncating : {Side::kPre, Side::kPost})
      for (std::optional<std::int64_t> maxlen : {std::optional<std::int64_t>(6), std::optional<std::int64_t>()}) {
        PadOptions o;
        o.maxlen = maxlen;
        o.padding = padding;
        o.truncating = truncating;
        o.value = -1;
        const PaddedSequences expected = pad_sequences(batch, o);
        const PaddedSequences shape = pad_shape(batch, o);
        INFO("padding " << side_name(padding) << ", truncating " << side_name(truncating) << ", maxlen " << (maxlen ? *maxlen : 0));
        CHECK(shape.ids.empty());
        CHECK(shape.rows == expected.rows);
        CHECK(shape.cols == expected.cols);
        CHECK(shape.lengths == expected.lengths);
        CHECK(shape.truncated_tokens == expected.truncated_tokens);
        std::vector<std::int32_t> ids(static_cast<std::size_t>(shape.rows * shape.cols), 12345);
        for (std::int64_t first = 0; first < shape.rows; first += 7)  // ranges of 7 rows, the last one short
          pad_rows_into(batch, o, shape.cols, first, std::min<std::int64_t>(7, shape.rows - first), ids.data() + first * shape.cols);
        CHECK(ids == expected.ids);
      }
}
