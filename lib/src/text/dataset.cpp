#include "attn/text/dataset.h"

#include "attn/text/csv.h"

namespace attn::text {

TextTable read_text_csv(const std::string& path, const TextCsvOptions& options) {
  CsvReader csv(path);
  TextTable table;
  const std::size_t text_col = csv.column(options.text_column);

  std::vector<std::size_t> label_cols;
  std::vector<std::string> missing;
  for (const std::string& name : options.label_columns) {
    if (auto c = csv.find_column(name))
      label_cols.push_back(*c);
    else
      missing.push_back(name);
  }
  const bool none_present = label_cols.empty();
  if (!missing.empty() && !(options.labels_optional && none_present)) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "'" : ", '") + m + "'";
    std::string have;
    for (const std::string& h : csv.header()) have += (have.empty() ? "" : ", ") + h;
    throw CsvError(path + ":1: no label column " + list + " in the header (columns: " + have + ")");
  }
  if (!label_cols.empty()) table.label_names = options.label_columns;

  std::optional<std::size_t> id_col;
  if (!options.id_column.empty()) {
    id_col = csv.find_column(options.id_column);
    if (!id_col && options.id_required) csv.column(options.id_column);  // throws with the column list
  }
  table.ids_are_row_numbers = !id_col;

  CsvRecord rec;
  std::int64_t row = 0;
  while (csv.next(rec)) {
    ++row;
    table.texts.push_back(std::move(rec.fields[text_col]));
    table.ids.push_back(id_col ? std::move(rec.fields[*id_col]) : std::to_string(row));
    for (std::size_t k = 0; k < label_cols.size(); ++k) {
      const std::string& v = rec.fields[label_cols[k]];
      if (v == "0")
        table.labels.push_back(0.0f);
      else if (v == "1")
        table.labels.push_back(1.0f);
      else
        throw CsvError(path + ":" + std::to_string(rec.line) + ": column " + std::to_string(label_cols[k] + 1) + " (" +
                       table.label_names[k] + "): label must be 0 or 1, got '" + v + "'");
    }
  }
  return table;
}

}  // namespace attn::text
