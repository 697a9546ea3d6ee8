#include "attn/text/padding.h"
#include "attn/text/threads.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace attn::text {

Side parse_side(std::string_view value, std::string_view what) {
  if (value == "pre") return Side::kPre;
  if (value == "post") return Side::kPost;
  throw std::invalid_argument(std::string(what) + " must be 'pre' or 'post', got '" + std::string(value) + "'");
}

const char* side_name(Side side) { return side == Side::kPre ? "pre" : "post"; }

void to_json(nlohmann::json& j, Side side) { j = side_name(side); }

void from_json(const nlohmann::json& j, Side& side) {
  if (!j.is_string()) throw std::invalid_argument("expected \"pre\" or \"post\", got " + j.dump());
  side = parse_side(j.get<std::string>(), "a padding side");
}

namespace {

std::int64_t checked_maxlen(const PadOptions& options) {
  if (*options.maxlen < 1) throw std::invalid_argument("pad_sequences: maxlen must be >= 1, got " + std::to_string(*options.maxlen));
  return *options.maxlen;
}

/// One row of pad_sequences: `n` ids from `ids` into `dst` [cols]; returns the tokens kept.
std::int64_t pad_row(const std::int32_t* ids, std::int64_t n, std::int64_t cols, const PadOptions& options, std::int32_t* dst) {
  const std::int64_t keep = std::min(n, cols);
  const std::int32_t* first = ids + (options.truncating == Side::kPre ? n - keep : 0);
  const std::int64_t pad = cols - keep;
  std::fill(dst, dst + cols, options.value);
  std::copy(first, first + keep, dst + (options.padding == Side::kPre ? pad : 0));
  return keep;
}

/// pad_sequences over any row source: length(r) and row(r) (a pointer to its ids).
template <class Length, class Row>
PaddedSequences pad_rows(std::size_t rows, Length&& length, Row&& row, const PadOptions& options, int threads) {
  PaddedSequences out;
  out.rows = static_cast<std::int64_t>(rows);
  if (options.maxlen) {
    out.cols = checked_maxlen(options);
  } else {
    for (std::size_t r = 0; r < rows; ++r) out.cols = std::max<std::int64_t>(out.cols, length(r));
  }
  out.ids.resize(static_cast<std::size_t>(out.rows * out.cols));
  out.lengths.resize(rows);
  const std::size_t workers = rows < 8192 ? 1 : static_cast<std::size_t>(std::max(1, threads));
  std::vector<std::int64_t> truncated(workers, 0);
  auto pad_range = [&](std::size_t w) {
    for (std::size_t r = rows * w / workers; r < rows * (w + 1) / workers; ++r) {
      const std::int64_t n = length(r);
      out.lengths[r] = pad_row(row(r), n, out.cols, options, out.ids.data() + static_cast<std::int64_t>(r) * out.cols);
      truncated[w] += n - out.lengths[r];
    }
  };
  on_threads(workers, pad_range);
  for (std::int64_t t : truncated) out.truncated_tokens += t;
  return out;
}

}  // namespace

PaddedSequences pad_sequences(const std::vector<Sequence>& sequences, const PadOptions& options) {
  return pad_rows(
      sequences.size(), [&](std::size_t r) { return static_cast<std::int64_t>(sequences[r].size()); },
      [&](std::size_t r) { return sequences[r].data(); }, options, 1);
}

PaddedSequences pad_sequences(const SequenceBatch& sequences, const PadOptions& options, int threads) {
  return pad_rows(
      sequences.size(), [&](std::size_t r) { return sequences.length(r); }, [&](std::size_t r) { return sequences.row(r); }, options,
      threads);
}

PaddedSequences pad_shape(const SequenceBatch& sequences, const PadOptions& options) {
  PaddedSequences out;
  out.rows = static_cast<std::int64_t>(sequences.size());
  if (options.maxlen) {
    out.cols = checked_maxlen(options);
  } else {
    for (std::size_t r = 0; r < sequences.size(); ++r) out.cols = std::max(out.cols, sequences.length(r));
  }
  out.lengths.resize(sequences.size());
  for (std::size_t r = 0; r < sequences.size(); ++r) {
    out.lengths[r] = std::min(sequences.length(r), out.cols);
    out.truncated_tokens += sequences.length(r) - out.lengths[r];
  }
  return out;
}

void pad_rows_into(const SequenceBatch& sequences, const PadOptions& options, std::int64_t cols, std::int64_t first, std::int64_t count,
                   std::int32_t* out) {
  for (std::int64_t r = first; r < first + count; ++r)
    pad_row(sequences.row(static_cast<std::size_t>(r)), sequences.length(static_cast<std::size_t>(r)), cols, options,
            out + (r - first) * cols);
}

}  // namespace attn::text
