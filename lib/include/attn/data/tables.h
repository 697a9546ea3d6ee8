#pragma once
/// Reading the CSVs of the non-text models: numeric feature rows with a 0/1 label (feature-attention)
/// and source/target string pairs (seq2seq-attention). Errors (attn::text::CsvError) name the file,
/// the line and the column: a missing column, a value that is not a finite number, a label other
/// than 0/1, malformed CSV or invalid UTF-8.
#include <cstdint>
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

}  // namespace attn::data
