#pragma once
/// Human rationales: the words people marked as the reason for a text's label, in the formats the
/// public corpora come in. ERASER (DeYoung et al. 2020; HateXplain's conversion): a docs file of
/// {"docid", "document"} lines, the words being document.split(' '), and an annotations file (JSON
/// Lines or one JSON array) of {"annotation_id", "classification", "evidences": [[{"docid",
/// "start_token", "end_token" (exclusive)}, ...]]}. SemEval-2021 Toxic Spans: a CSV of `spans` (the
/// 0-based character indices marked toxic, a JSON list) and `text`; a word (a run without
/// whitespace) is marked when any of its characters is.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::data {

struct RationaleRow {
  std::string id;     ///< ERASER's annotation_id; Toxic Spans: the data row, 1-based
  std::string text;   ///< what the model reads
  std::string label;  ///< ERASER's classification ("" for Toxic Spans)
  /// The file's words, and for each whether people marked it.
  std::vector<std::string> words;
  std::vector<std::uint8_t> marked;
  /// The marked spans [first, last) in words, in order, none empty or overlapping.
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::int64_t line = 0;  ///< where the row's rationale is in its file
};

/// Rows with at least one marked word (the others have no rationale to compare with), in the
/// annotations' order. Errors (std::runtime_error) name the file, line and field: JSON that does not
/// parse, a missing field, an id with no document, a span outside its document, an empty or
/// overlapping span.
std::vector<RationaleRow> read_eraser_rationales(const std::string& annotations, const std::string& docs);
/// The same for a Toxic Spans CSV: a `spans` cell that is not a list of integers, or an index
/// outside the text, is an error naming the line.
std::vector<RationaleRow> read_toxic_spans(const std::string& csv);

/// A file of rationales in its format, by extension: .csv is Toxic Spans, anything else ERASER's
/// annotations with their documents in `docs` ("": docs.jsonl beside them). `docs_flag` names the
/// option that gave `docs`, for the error when it is given with a Toxic Spans CSV.
std::vector<RationaleRow> read_rationales(const std::string& path, const std::string& docs, const std::string& docs_flag);

}  // namespace attn::data
