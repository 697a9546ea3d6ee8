#include "attn/text/padding.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attn::text {

Side parse_side(std::string_view value, std::string_view what) {
  if (value == "pre") return Side::kPre;
  if (value == "post") return Side::kPost;
  throw std::invalid_argument(std::string(what) + " must be 'pre' or 'post', got '" + std::string(value) + "'");
}

const char* side_name(Side side) { return side == Side::kPre ? "pre" : "post"; }

PaddedSequences pad_sequences(const std::vector<Sequence>& sequences, const PadOptions& options) {
  PaddedSequences out;
  out.rows = static_cast<std::int64_t>(sequences.size());
  if (options.maxlen) {
    if (*options.maxlen < 1) throw std::invalid_argument("pad_sequences: maxlen must be >= 1, got " + std::to_string(*options.maxlen));
    out.cols = *options.maxlen;
  } else {
    for (const Sequence& s : sequences) out.cols = std::max<std::int64_t>(out.cols, static_cast<std::int64_t>(s.size()));
  }
  out.ids.assign(static_cast<std::size_t>(out.rows * out.cols), options.value);
  out.lengths.resize(sequences.size());
  for (std::size_t r = 0; r < sequences.size(); ++r) {
    const Sequence& s = sequences[r];
    const auto n = static_cast<std::int64_t>(s.size());
    const std::int64_t keep = std::min(n, out.cols);
    out.truncated_tokens += n - keep;
    const auto first = s.begin() + (options.truncating == Side::kPre ? n - keep : 0);
    std::int32_t* row = out.ids.data() + static_cast<std::int64_t>(r) * out.cols;
    std::copy(first, first + keep, row + (options.padding == Side::kPre ? out.cols - keep : 0));
    out.lengths[r] = keep;
  }
  return out;
}

}  // namespace attn::text
