// Human rationales in ERASER's and Toxic Spans' formats (see rationales.h).
#include "attn/data/rationales.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "attn/text/char_spans.h"
#include "attn/text/csv.h"

namespace attn::data {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& file, std::int64_t line, const std::string& what) {
  throw std::runtime_error(file + ":" + std::to_string(line) + ": " + what);
}

/// Each JSON value of a file of JSON Lines or of one JSON array, with the line it starts on.
std::vector<std::pair<json, std::int64_t>> json_values(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::pair<json, std::int64_t>> out;
  const std::size_t first = all.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && all[first] == '[') {  // one array: its elements (lines are not kept by the parser)
    json array;
    try {
      array = json::parse(all);
    } catch (const json::exception& e) {
      throw std::runtime_error(path + ": not valid JSON: " + e.what());
    }
    for (json& v : array) out.emplace_back(std::move(v), static_cast<std::int64_t>(out.size() + 1));
    return out;
  }
  std::int64_t line = 0;
  std::size_t at = 0;
  while (at < all.size()) {
    const std::size_t end = std::min(all.find('\n', at), all.size());
    ++line;
    const std::string text = all.substr(at, end - at);
    at = end + 1;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.emplace_back(json::parse(text), line);
    } catch (const json::exception& e) {
      fail(path, line, std::string("not valid JSON: ") + e.what());
    }
  }
  return out;
}

const json& field(const json& v, const char* key, const std::string& file, std::int64_t line) {
  if (!v.is_object() || !v.contains(key)) fail(file, line, std::string("no field '") + key + "'");
  return v.at(key);
}

std::string string_field(const json& v, const char* key, const std::string& file, std::int64_t line) {
  const json& f = field(v, key, file, line);
  if (!f.is_string()) fail(file, line, std::string("'") + key + "' must be a string");
  return f.get<std::string>();
}

std::int64_t integer_field(const json& v, const char* key, const std::string& file, std::int64_t line) {
  const json& f = field(v, key, file, line);
  if (!f.is_number_integer()) fail(file, line, std::string("'") + key + "' must be an integer");
  return f.get<std::int64_t>();
}

/// Document.split(' '): Python's, empty words kept (two spaces make one).
std::vector<std::string> split_on_spaces(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == ' ')
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

/// Sorts `spans`, checks them against `words` and marks their words; the error names the file and line.
void mark(RationaleRow& row, const std::string& file) {
  std::sort(row.spans.begin(), row.spans.end());
  const auto n = static_cast<std::int64_t>(row.words.size());
  row.marked.assign(row.words.size(), 0);
  for (std::size_t i = 0; i < row.spans.size(); ++i) {
    const auto [a, b] = row.spans[i];
    if (a >= b) fail(file, row.line, row.id + ": an empty span [" + std::to_string(a) + ", " + std::to_string(b) + ")");
    if (a < 0 || b > n)
      fail(file, row.line,
           row.id + ": span [" + std::to_string(a) + ", " + std::to_string(b) + ") outside its " + std::to_string(n) + " words");
    if (i > 0 && a < row.spans[i - 1].second) fail(file, row.line, row.id + ": overlapping spans at word " + std::to_string(a));
    for (std::int64_t w = a; w < b; ++w) row.marked[static_cast<std::size_t>(w)] = 1;
  }
}

/// The runs of consecutive marked words, [first, last).
std::vector<std::pair<std::int64_t, std::int64_t>> runs_of(const std::vector<std::uint8_t>& marked) {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (std::size_t w = 0; w < marked.size(); ++w)
    if (marked[w] && (w == 0 || !marked[w - 1])) {
      std::size_t e = w;
      while (e < marked.size() && marked[e]) ++e;
      runs.emplace_back(static_cast<std::int64_t>(w), static_cast<std::int64_t>(e));
    }
  return runs;
}

}  // namespace

std::vector<RationaleRow> read_eraser_rationales(const std::string& annotations, const std::string& docs) {
  std::unordered_map<std::string, std::string> documents;
  for (const auto& [v, line] : json_values(docs)) documents[string_field(v, "docid", docs, line)] = string_field(v, "document", docs, line);
  std::vector<RationaleRow> rows;
  for (const auto& [v, line] : json_values(annotations)) {
    RationaleRow row;
    row.line = line;
    row.id = string_field(v, "annotation_id", annotations, line);
    row.label = field(v, "classification", annotations, line).is_string() ? v.at("classification").get<std::string>() : "";
    const json& evidences = field(v, "evidences", annotations, line);
    if (!evidences.is_array()) fail(annotations, line, "'evidences' must be a list of lists");
    std::string docid;
    for (const json& group : evidences) {
      if (!group.is_array()) fail(annotations, line, "'evidences' must be a list of lists");
      for (const json& e : group) {
        const std::string d = string_field(e, "docid", annotations, line);
        if (!docid.empty() && d != docid) fail(annotations, line, row.id + ": evidence from two documents ('" + docid + "', '" + d + "')");
        docid = d;
        row.spans.emplace_back(integer_field(e, "start_token", annotations, line), integer_field(e, "end_token", annotations, line));
      }
    }
    if (row.spans.empty()) continue;  // no rationale
    const auto doc = documents.find(docid);
    if (doc == documents.end()) fail(annotations, line, row.id + ": docid '" + docid + "' is not in " + docs);
    row.text = doc->second;
    row.words = split_on_spaces(row.text);
    mark(row, annotations);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<RationaleRow> read_toxic_spans(const std::string& csv) {
  text::CsvReader reader(csv, text::TableFormat::kCsv);
  const std::size_t spans_column = reader.column("spans"), text_column = reader.column("text");
  std::vector<RationaleRow> rows;
  text::CsvRecord record;
  std::int64_t data_row = 0;
  while (reader.next(record)) {
    ++data_row;
    RationaleRow row;
    row.id = std::to_string(data_row);
    row.line = record.line;
    row.text = record.fields[text_column];
    const std::vector<std::int64_t> offsets =
        text::parse_span_offsets(record.fields[spans_column], text::code_points(row.text),
                                 csv + ":" + std::to_string(record.line) + ": column " + std::to_string(spans_column + 1) + " (spans)");
    const std::vector<text::WordRange> words = text::word_ranges(row.text);  // split once: the words and their marks
    for (const text::WordRange& w : words) row.words.push_back(row.text.substr(w.byte_begin, w.byte_end - w.byte_begin));
    std::vector<std::uint8_t> marked;
    for (const bool touched : text::words_touched(words, offsets)) marked.push_back(touched);
    row.spans = runs_of(marked);
    if (row.spans.empty()) continue;
    mark(row, csv);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<RationaleRow> read_rationales(const std::string& path, const std::string& docs, const std::string& docs_flag) {
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error(path + ": cannot open");  // (before its docs)
  if (std::filesystem::path(path).extension() == ".csv") {
    if (!docs.empty()) throw std::invalid_argument(docs_flag + " is for ERASER's annotations; " + path + " is a Toxic Spans CSV");
    return read_toxic_spans(path);
  }
  return read_eraser_rationales(path, docs.empty() ? (std::filesystem::path(path).parent_path() / "docs.jsonl").string() : docs);
}

}  // namespace attn::data
