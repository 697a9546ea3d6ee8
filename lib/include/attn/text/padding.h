#pragma once
/// Keras' `pad_sequences` (int32 output).
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attn/text/tokenizer.h"

namespace attn::text {

class SubwordVocabulary;

/// Where padding goes or which end truncation cuts: Keras' 'pre' and 'post'.
enum class Side { kPre, kPost };

/// Parses "pre" / "post"; throws std::invalid_argument naming `what` otherwise.
Side parse_side(std::string_view value, std::string_view what);
const char* side_name(Side side);
/// JSON as "pre" / "post" (nlohmann's hooks, for typed configs); another value throws std::invalid_argument.
void to_json(nlohmann::json& j, Side side);
void from_json(const nlohmann::json& j, Side& side);

struct PadOptions {
  /// Width of every row; unset: the longest sequence. Must be >= 1 when set.
  std::optional<std::int64_t> maxlen;
  /// kPre puts padding on the left (right-aligns the sequence), Keras' default.
  Side padding = Side::kPre;
  /// kPre keeps the last maxlen items of a long sequence (a long comment keeps its end).
  Side truncating = Side::kPre;
  /// Fill value.
  std::int32_t value = 0;
};

/// A row-major [rows, cols] int32 matrix plus each row's real (kept) token count.
struct PaddedSequences {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int32_t> ids;
  std::vector<std::int64_t> lengths;  ///< tokens kept in each row, <= cols
  std::int64_t truncated_tokens = 0;  ///< tokens cut off by maxlen
  /// Set when the ids are a SubwordVocabulary's (text/subwords.h): the words their n-grams come from.
  std::shared_ptr<const SubwordVocabulary> subwords;
};

PaddedSequences pad_sequences(const std::vector<Sequence>& sequences, const PadOptions& options = {});
/// The same for the bulk form; `threads` split the rows.
PaddedSequences pad_sequences(const SequenceBatch& sequences, const PadOptions& options = {}, int threads = 1);

/// pad_sequences(sequences, options) without its matrix: rows, cols, lengths and truncated_tokens
/// set, `ids` left empty. pad_rows_into then writes any of its rows where they are needed (attn
/// prepare pads straight into data.pt, in chunks, rather than into a 128 MB matrix first).
PaddedSequences pad_shape(const SequenceBatch& sequences, const PadOptions& options = {});
/// Rows [first, first + count) of pad_sequences(sequences, options) into out [count * cols], with
/// cols = pad_shape(sequences, options).cols.
void pad_rows_into(const SequenceBatch& sequences, const PadOptions& options, std::int64_t cols, std::int64_t first, std::int64_t count,
                   std::int32_t* out);

}  // namespace attn::text
