#include "attn/text/dataset.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace attn::text {

namespace {

bool whole_number(const std::string& s) {
  return !s.empty() && s.size() < 18 &&
         std::all_of(s.begin() + (s[0] == '-' ? 1 : 0), s.end(), [](char c) { return c >= '0' && c <= '9'; }) && s != "-";
}

}  // namespace

std::vector<std::string> read_classes(const std::string& path, const std::string& column, TableFormat format) {
  CsvReader csv(path, format);
  const std::size_t c = csv.column(column);
  std::set<std::string> seen;
  CsvRecord rec;
  while (csv.next(rec)) {
    if (rec.fields[c].empty())
      throw CsvError(path + ":" + std::to_string(rec.line) + ": column " + std::to_string(c + 1) + " (" + column + "): an empty class");
    seen.insert(rec.fields[c]);
  }
  std::vector<std::string> classes(seen.begin(), seen.end());
  if (std::all_of(classes.begin(), classes.end(), whole_number))
    std::sort(classes.begin(), classes.end(), [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
  if (classes.size() < 2)
    throw CsvError(path + ": column '" + column + "' holds " + (classes.empty() ? "no class" : "one class ('" + classes.front() + "')") +
                   ": a classifier needs two or more");
  return classes;
}

std::vector<std::string> parse_classes(const std::vector<std::string>& classes, const std::string& flag) {
  if (classes.size() < 2)
    throw std::invalid_argument(flag + ": a classifier needs two or more classes, got " + std::to_string(classes.size()));
  std::set<std::string> seen;
  for (const std::string& c : classes) {
    if (c.empty()) throw std::invalid_argument(flag + ": an empty class name");
    if (!seen.insert(c).second) throw std::invalid_argument(flag + ": class '" + c + "' is given twice");
  }
  return classes;
}

TextColumns read_text_csv_blocks(const std::string& path, const TextCsvOptions& options, std::size_t block_rows,
                                 const std::function<void(TextBlock&&)>& on_block) {
  CsvReader csv(path, options.format);
  TextColumns columns;
  const std::size_t text_col = csv.column(options.text_column);
  csv.require_string(text_col);
  const bool by_class = !options.class_column.empty();
  std::optional<std::size_t> class_col;
  std::vector<std::string> classes = options.classes;
  if (by_class) {
    class_col = csv.find_column(options.class_column);
    if (!class_col && !options.labels_optional) csv.column(options.class_column);  // throws with the column list
    if (class_col && classes.empty()) classes = read_classes(path, options.class_column, options.format);
    if (class_col) columns.label_names = classes;
  }

  std::vector<std::size_t> label_cols;
  std::vector<std::string> missing;
  for (const std::string& name : by_class ? std::vector<std::string>{} : options.label_columns) {
    if (auto c = csv.find_column(name))
      label_cols.push_back(*c);
    else
      missing.push_back(name);
  }
  if (!missing.empty() && !(options.labels_optional && label_cols.empty())) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "'" : ", '") + m + "'";
    std::string have;
    for (const std::string& h : csv.header()) have += (have.empty() ? "" : ", ") + h;
    throw CsvError(path + ":1: no label column " + list + " in the header (columns: " + have + ")");
  }
  if (!label_cols.empty()) columns.label_names = options.label_columns;
  const auto class_index = [&](const CsvRecord& rec) {
    const std::string& v = rec.fields[*class_col];
    const auto it = std::find(classes.begin(), classes.end(), v);
    if (it == classes.end()) {
      std::string all;
      for (const std::string& k : classes) all += (all.empty() ? "" : ", ") + k;
      throw CsvError(path + ":" + std::to_string(rec.line) + ": column " + std::to_string(*class_col + 1) + " (" + options.class_column +
                     "): " + (v.empty() ? "an empty class" : "class '" + v + "' is not one of the model's (" + all + ")"));
    }
    return static_cast<std::size_t>(it - classes.begin());
  };

  std::optional<std::size_t> id_col;
  if (!options.id_column.empty()) {
    id_col = csv.find_column(options.id_column);
    if (!id_col && options.id_required) csv.column(options.id_column);  // throws with the column list
  }
  columns.ids_are_row_numbers = !id_col;

  CsvRecord rec;
  TextBlock block;
  std::size_t block_bytes = 0;  // the last block's text bytes: room for the next one's
  std::int64_t row = 0;
  while (csv.next(rec)) {
    ++row;
    if (block.texts.empty()) block.texts.reserve(block_rows, block_bytes + block_bytes / 8);
    if (options.rewrite)
      block.texts.push_back(options.rewrite(rec.fields[text_col], row));
    else
      block.texts.push_back(rec.fields[text_col]);  // a copy: the reader keeps its buffer
    block.ids.push_back(id_col ? rec.fields[*id_col] : std::to_string(row));
    if (class_col) {  // one-hot over the classes
      const std::size_t k = class_index(rec);
      for (std::size_t c = 0; c < classes.size(); ++c) block.labels.push_back(c == k ? 1.0f : 0.0f);
    }
    for (std::size_t k = 0; k < label_cols.size(); ++k) {
      const std::string& v = rec.fields[label_cols[k]];
      if (options.target_threshold > 0) {  // a share of raters, binarised
        char* end = nullptr;
        const double x = v.empty() ? -1 : std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(x >= 0 && x <= 1))
          throw CsvError(path + ":" + std::to_string(rec.line) + ": column " + std::to_string(label_cols[k] + 1) + " (" +
                         columns.label_names[k] + "): with --target-threshold a label is a number in [0, 1], got '" + v + "'");
        block.labels.push_back(x >= options.target_threshold ? 1.0f : 0.0f);
      } else if (v == "0") {
        block.labels.push_back(0.0f);
      } else if (v == "1") {
        block.labels.push_back(1.0f);
      } else {
        throw CsvError(path + ":" + std::to_string(rec.line) + ": column " + std::to_string(label_cols[k] + 1) + " (" +
                       columns.label_names[k] + "): label must be 0 or 1, got '" + v + "'" +
                       (v.find('.') != std::string::npos ? " (fractions: --target-threshold)" : ""));
      }
    }
    if (block.texts.size() == block_rows) {
      block_bytes = block.texts.bytes();
      on_block(std::move(block));
      block = TextBlock();
    }
  }
  if (!block.texts.empty()) on_block(std::move(block));
  return columns;
}

LabelTable read_label_csv(const std::string& path, const std::vector<std::string>& label_columns, const std::string& id_column) {
  CsvReader csv(path);
  const std::size_t id_col = csv.column(id_column);
  std::vector<std::size_t> cols;
  for (const std::string& name : label_columns) cols.push_back(csv.column(name));
  LabelTable t;
  CsvRecord rec;
  while (csv.next(rec)) {
    t.ids.push_back(rec.fields[id_col]);
    bool scored = true;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const std::string& v = rec.fields[cols[k]];
      if (v == "0" || v == "1") {
        t.labels.push_back(v == "1" ? 1.0f : 0.0f);
      } else if (v == "-1") {
        t.labels.push_back(0.0f);
        scored = false;
      } else {
        throw CsvError(path + ":" + std::to_string(rec.line) + ": column " + std::to_string(cols[k] + 1) + " (" + label_columns[k] +
                       "): label must be 0, 1 or -1 (not scored), got '" + v + "'");
      }
    }
    t.scored.push_back(scored);
  }
  return t;
}

}  // namespace attn::text
