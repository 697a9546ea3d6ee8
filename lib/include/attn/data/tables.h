#pragma once
/// Reading the CSVs of the non-text models: numeric feature rows with a 0/1 label (feature-attention)
/// and source/target string pairs (seq2seq-attention), texts with the characters people marked in
/// them (span taggers, attn spans). Errors (attn::text::CsvError) name the file,
/// the line and the column: a missing column, a value that is not a finite number, a label other
/// than 0/1, malformed CSV or invalid UTF-8.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::data {

struct FeatureTable {
  std::vector<std::string> feature_names;
  std::string label_name;  ///< empty when the file has no label column (and labels were optional)
  std::int64_t rows = 0;
  std::vector<float> values;  ///< row-major [rows, feature_names.size()]
  std::vector<float> labels;  ///< [rows], 0 or 1; empty without labels
};

/// `features` empty: every column except `label_column` (and `id_column` if present). With
/// `label_optional`, a file without the label column is read without labels.
FeatureTable read_feature_csv(const std::string& path, const std::vector<std::string>& features, const std::string& label_column,
                              bool label_optional = false, const std::string& id_column = "id");

struct PairTable {
  std::vector<std::string> sources, targets;  ///< targets empty when the file has none (optional)
};

/// The `source_column` and `target_column` of every row; with `target_optional`, a file without
/// the target column gives sources only.
PairTable read_pair_csv(const std::string& path, const std::string& source_column, const std::string& target_column,
                        bool target_optional = false);

/// Texts with their marked characters (SemEval-2021 Toxic Spans' CSV: a `text` column and a `spans`
/// column of code point offsets, "[3, 4, 5]").
struct SpanTable {
  std::vector<std::string> texts;
  std::vector<std::string> ids;  ///< the id column's, or each row's 0-based position (SemEval's ids)
  /// Per row its marked characters, when the file has the spans column.
  std::optional<std::vector<std::vector<std::int64_t>>> marked;
};

/// Whether a span table's file must have its spans column.
enum class Marks { kRequired, kOptional };
/// `path`'s rows (CSV, TSV or JSON Lines); `id_column` "": positions as ids. A missing
/// column, a spans cell that is not a list of offsets inside its text, invalid UTF-8 or no rows
/// throw naming the file, line and column.
SpanTable read_span_table(const std::string& path, const std::string& text_column, const std::string& spans_column,
                          const std::string& id_column, Marks marks);

}  // namespace attn::data
