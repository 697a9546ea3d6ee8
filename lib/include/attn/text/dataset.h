#pragma once
/// Reading a labelled text file (Kaggle's Jigsaw layout: id, comment_text, six 0/1 label columns; or
/// one class per row in a label column, as HateXplain, Davidson et al. and OLID have it), as CSV,
/// TSV or JSON Lines (csv.h).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "attn/text/csv.h"
#include "attn/text/packed_texts.h"

namespace attn::text {

/// The six labels of the Jigsaw toxic-comment competition, in the file's order.
inline const std::vector<std::string> kJigsawLabels = {"toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"};

struct TextCsvOptions {
  /// Column holding the text.
  std::string text_column = "comment_text";
  /// Label columns, each holding 0 or 1.
  std::vector<std::string> label_columns = kJigsawLabels;
  /// When > 0, the label columns hold fractions in [0, 1] (Civil Comments' `target`: the share of
  /// raters who found the comment toxic), a row positive when its value is >= this.
  double target_threshold = 0;
  /// When true, a file that has none of the label columns is read without labels (a test file);
  /// a file with only some of them is still an error.
  bool labels_optional = false;
  /// Column holding the row id; empty: use the 1-based row number.
  std::string id_column = "id";
  /// When true, a missing id column is an error; otherwise row numbers are used.
  bool id_required = false;
  /// Multi-class, one label per row: the column holding each row's class (then label_columns is
  /// not read). Its labels are one-hot over `classes`.
  std::string class_column;
  /// The classes, in their order; empty: the file's values, sorted (numerically when all are
  /// whole numbers). A value not among given classes is an error naming the line.
  std::vector<std::string> classes;
  TableFormat format = TableFormat::kAuto;
  /// When set, each text is read as rewrite(text, its 1-based data row) (e.g. perturbed: attn robustness).
  std::function<std::string(const std::string&, std::int64_t)> rewrite;
};

/// The distinct values of `path`'s column `column`, sorted (numerically when all are whole numbers):
/// a multi-class file's classes. Fewer than two, or an empty value, is an error naming the file (and line).
std::vector<std::string> read_classes(const std::string& path, const std::string& column, TableFormat format = TableFormat::kAuto);

/// A list of classes as given (`flag`, e.g. --classes): two or more, none empty, none twice;
/// otherwise std::invalid_argument naming `flag`.
std::vector<std::string> parse_classes(const std::vector<std::string>& classes, const std::string& flag);

/// What the header held.
struct TextColumns {
  std::vector<std::string> label_names;  ///< empty when the file has no labels
  bool ids_are_row_numbers = false;
};

/// A run of consecutive rows.
struct TextBlock {
  std::vector<std::string> ids;
  PackedTexts texts;
  std::vector<float> labels;  ///< row-major [rows, label count], 0 or 1 (multi-class: one-hot over the classes)
};

/// Reads `path` in blocks of up to `block_rows` rows, calling `on_block` for each in file order,
/// so a consumer can work while the file is read. Malformed input, a missing column, a label other
/// than 0/1 (or a class not among the classes) and invalid UTF-8 throw attn::text::CsvError naming
/// file, line and column.
TextColumns read_text_csv_blocks(const std::string& path, const TextCsvOptions& options, std::size_t block_rows,
                                 const std::function<void(TextBlock&&)>& on_block);

/// Kaggle's test_labels.csv: an id column and label columns holding 0, 1 or -1 (-1: not scored).
struct LabelTable {
  std::vector<std::string> ids;
  std::vector<float> labels;  ///< row-major [rows, label count]
  std::vector<bool> scored;   ///< false where the row has a -1
};
/// Reads such a file; other values, missing columns and malformed CSV are errors naming file,
/// line and column.
LabelTable read_label_csv(const std::string& path, const std::vector<std::string>& label_columns, const std::string& id_column = "id");

}  // namespace attn::text
