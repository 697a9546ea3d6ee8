#include "attn/data/tables.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "attn/text/char_spans.h"
#include "attn/text/csv.h"

namespace attn::data {
namespace {

[[noreturn]] void fail(const text::CsvReader& csv, std::int64_t line, std::size_t column, const std::string& what) {
  throw text::CsvError(csv.name() + ":" + std::to_string(line) + ": column " + std::to_string(column + 1) + " (" + csv.header()[column] +
                       "): " + what);
}

float parse_number(const text::CsvReader& csv, const text::CsvRecord& rec, std::size_t column) {
  const std::string& s = rec.fields[column];
  const char* begin = s.c_str();
  while (*begin == ' ') ++begin;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  while (end && *end == ' ') ++end;
  if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    fail(csv, rec.line, column, "expected a finite number, got '" + s + "'");
  return static_cast<float>(v);
}

}  // namespace

FeatureTable read_feature_csv(const std::string& path, const std::vector<std::string>& features, const std::string& label_column,
                              bool label_optional, const std::string& id_column) {
  text::CsvReader csv(path);
  FeatureTable t;
  std::optional<std::size_t> label_col = csv.find_column(label_column);
  if (!label_col && !label_optional) csv.column(label_column);  // throws, listing the columns
  if (label_col) t.label_name = label_column;
  std::vector<std::size_t> cols;
  if (features.empty()) {
    for (std::size_t c = 0; c < csv.header().size(); ++c) {
      const std::string& name = csv.header()[c];
      if ((label_col && c == *label_col) || name == label_column || name == id_column) continue;
      cols.push_back(c);
      t.feature_names.push_back(name);
    }
    if (cols.empty()) throw text::CsvError(path + ":1: no feature columns besides the label '" + label_column + "'");
  } else {
    for (const std::string& f : features) {
      if (f == label_column) throw text::CsvError(path + ":1: the label column '" + f + "' cannot also be a feature");
      if (std::find(t.feature_names.begin(), t.feature_names.end(), f) != t.feature_names.end())
        throw text::CsvError(path + ":1: feature column '" + f + "' is listed twice");
      cols.push_back(csv.column(f));
      t.feature_names.push_back(f);
    }
  }
  text::CsvRecord rec;
  while (csv.next(rec)) {
    for (std::size_t c : cols) t.values.push_back(parse_number(csv, rec, c));
    if (label_col) {
      const std::string& v = rec.fields[*label_col];
      if (v == "0" || v == "1")
        t.labels.push_back(v == "1" ? 1.0f : 0.0f);
      else
        fail(csv, rec.line, *label_col, "label must be 0 or 1, got '" + v + "'");
    }
    ++t.rows;
  }
  return t;
}

PairTable read_pair_csv(const std::string& path, const std::string& source_column, const std::string& target_column, bool target_optional) {
  text::CsvReader csv(path);
  const std::size_t source = csv.column(source_column);
  std::optional<std::size_t> target = csv.find_column(target_column);
  if (!target && !target_optional) csv.column(target_column);  // throws, listing the columns
  PairTable t;
  text::CsvRecord rec;
  while (csv.next(rec)) {
    t.sources.push_back(rec.fields[source]);
    if (target) t.targets.push_back(rec.fields[*target]);
  }
  return t;
}

SpanTable read_span_table(const std::string& path, const std::string& text_column, const std::string& spans_column,
                          const std::string& id_column, Marks marks) {
  text::CsvReader reader(path);
  const std::size_t text_at = reader.column(text_column);
  const std::optional<std::size_t> spans_at = marks == Marks::kRequired ? reader.column(spans_column) : reader.find_column(spans_column);
  const std::optional<std::size_t> id_at = id_column.empty() ? std::nullopt : std::optional<std::size_t>(reader.column(id_column));
  reader.require_string(text_at);
  SpanTable out;
  if (spans_at) out.marked.emplace();
  text::CsvRecord record;
  while (reader.next(record)) {
    const std::string& t = record.fields[text_at];
    out.ids.push_back(id_at ? record.fields[*id_at] : std::to_string(out.texts.size()));
    if (spans_at)
      out.marked->push_back(text::parse_span_offsets(
          record.fields[*spans_at], text::code_points(t),
          path + ":" + std::to_string(record.line) + ": column " + std::to_string(*spans_at + 1) + " (" + spans_column + ")"));
    out.texts.push_back(t);
  }
  if (out.texts.empty()) throw std::runtime_error(path + ": no data rows");
  return out;
}

}  // namespace attn::data
