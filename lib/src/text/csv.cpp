#include "attn/text/csv.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <nlohmann/json.hpp>

#include "attn/text/unicode.h"

namespace attn::text {
namespace {
constexpr std::size_t kBlock = 1 << 20;

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  return true;
}
}  // namespace

TableFormat format_of(const std::string& path) {
  for (const char* e : {".tsv", ".tab"})
    if (ends_with(path, e)) return TableFormat::kTsv;
  for (const char* e : {".jsonl", ".ndjson", ".json"})
    if (ends_with(path, e)) return TableFormat::kJsonl;
  return TableFormat::kCsv;
}

TableFormat parse_table_format(const std::string& name, const std::string& flag) {
  if (name == "csv") return TableFormat::kCsv;
  if (name == "tsv") return TableFormat::kTsv;
  if (name == "jsonl") return TableFormat::kJsonl;
  if (name == "auto" || name.empty()) return TableFormat::kAuto;
  throw std::invalid_argument(flag + ": csv, tsv or jsonl, got '" + name + "'");
}

CsvReader::CsvReader(const std::string& path, TableFormat format)
    : owned_(std::make_unique<std::ifstream>(path, std::ios::binary)), in_(owned_.get()), name_(path) {
  if (!*owned_) throw std::runtime_error(path + ": cannot open file for reading");
  format_ = format == TableFormat::kAuto ? format_of(path) : format;
  read_header();
}

CsvReader::CsvReader(std::istream& in, std::string name, TableFormat format) : in_(&in), name_(std::move(name)) {
  format_ = format == TableFormat::kAuto ? format_of(name_) : format;
  read_header();
}

void CsvReader::read_header() {
  CsvRecord head;
  if (!next(head))
    throw CsvError(name_ + ": empty file (expected a header row" + (format_ == TableFormat::kJsonl ? ", or an object)" : ")"));
  if (format_ == TableFormat::kJsonl) {
    pending_ = head;  // the first object is a record too; its keys named the header
    return;
  }
  header_ = std::move(head.fields);
}

std::optional<std::size_t> CsvReader::find_column(std::string_view column) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == column) return i;
  return std::nullopt;
}

std::size_t CsvReader::column(std::string_view column) const {
  if (auto i = find_column(column)) return *i;
  std::string have;
  for (const std::string& h : header_) have += (have.empty() ? "" : ", ") + h;
  throw CsvError(name_ + ":1: no column '" + std::string(column) + "' in the header (columns: " + have + ")");
}

void CsvReader::fail(std::int64_t line, std::size_t field, const std::string& what) const {
  std::string where = name_ + ":" + std::to_string(line) + ": ";
  if (field != std::string::npos) {
    where += "column " + std::to_string(field + 1);
    if (field < header_.size()) where += " (" + header_[field] + ")";
    where += ": ";
  }
  throw CsvError(where + what);
}

bool CsvReader::refill() {
  if (eof_) return false;
  // Keep the unparsed tail, then append a block; grow when a single record fills the buffer.
  if (end_ > pos_) std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  if (buf_.size() - end_ < kBlock) buf_.resize(std::max(buf_.size() * 2, end_ + kBlock));
  in_->read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
  const auto got = static_cast<std::size_t>(in_->gcount());
  if (in_->bad()) throw std::runtime_error(name_ + ": read error");
  if (got == 0) eof_ = true;
  const bool first_block = end_ == 0 && line_ == 1 && header_.empty();
  end_ += got;
  if (first_block && end_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;  // UTF-8 BOM
  return true;
}

CsvReader::Parse CsvReader::parse_record(CsvRecord& rec, std::size_t& consumed, std::int64_t& lines) {
  if (format_ != TableFormat::kCsv) return parse_line(rec, consumed, lines);
  const char* b = buf_.data();
  std::size_t i = pos_;
  std::size_t nfields = 0;
  lines = 0;
  if (i == end_) return eof_ ? Parse::kEnd : Parse::kNeedMore;
  while (true) {
    if (rec.fields.size() <= nfields) rec.fields.emplace_back();
    std::string& field = rec.fields[nfields];
    field.clear();
    if (i < end_ && b[i] == '"') {
      const std::int64_t start_line = line_ + lines;
      ++i;
      while (true) {
        const char* q = static_cast<const char*>(std::memchr(b + i, '"', end_ - i));
        if (!q) {
          if (!eof_) return Parse::kNeedMore;
          fail(start_line, nfields, "unterminated quoted field (opened here, never closed)");
        }
        const auto qi = static_cast<std::size_t>(q - b);
        field.append(b + i, qi - i);
        lines += std::count(b + i, b + qi, '\n');
        if (qi + 1 == end_ && !eof_) return Parse::kNeedMore;
        if (qi + 1 < end_ && b[qi + 1] == '"') {
          field += '"';
          i = qi + 2;
          continue;
        }
        i = qi + 1;
        break;
      }
      if (i < end_ && b[i] != ',' && b[i] != '\n' && b[i] != '\r')
        fail(line_ + lines, nfields, std::string("unexpected character '") + b[i] + "' after a closing quote");
    } else {
      std::size_t j = i;
      while (j < end_ && b[j] != ',' && b[j] != '\n' && b[j] != '\r') ++j;
      if (j == end_ && !eof_) return Parse::kNeedMore;
      field.append(b + i, j - i);
      i = j;
    }
    ++nfields;
    if (i == end_) break;  // end of file ends the record
    if (b[i] == ',') {
      ++i;
      continue;
    }
    if (b[i] == '\n') {
      ++i;
    } else {  // '\r', alone or before '\n'
      if (i + 1 == end_ && !eof_) return Parse::kNeedMore;
      i += (i + 1 < end_ && b[i + 1] == '\n') ? 2 : 1;
    }
    ++lines;
    break;
  }
  rec.fields.resize(nfields);
  consumed = i - pos_;
  return Parse::kRecord;
}

CsvReader::Parse CsvReader::parse_line(CsvRecord& rec, std::size_t& consumed, std::int64_t& lines) {
  const char* b = buf_.data();
  lines = 0;
  if (pos_ == end_) return eof_ ? Parse::kEnd : Parse::kNeedMore;
  const char* nl = static_cast<const char*>(std::memchr(b + pos_, '\n', end_ - pos_));
  if (!nl && !eof_) return Parse::kNeedMore;
  const std::size_t stop = nl ? static_cast<std::size_t>(nl - b) : end_;
  std::string_view line(b + pos_, stop - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.remove_prefix(3);  // a BOM, in any line
  consumed = stop - pos_ + (nl ? 1 : 0);
  lines = nl ? 1 : 0;
  rec.fields.clear();
  if (line.find_first_not_of(" \t") == std::string_view::npos) {  // blank: one empty field, skipped by next()
    rec.fields.emplace_back();
    return Parse::kRecord;
  }
  if (format_ == TableFormat::kJsonl) {
    json_fields(line, rec, line_, header_.empty() && !pending_);
    return Parse::kRecord;
  }
  for (std::size_t start = 0;;) {  // TSV: no quoting, a tab between fields
    const std::size_t tab = line.find('\t', start);
    rec.fields.emplace_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return Parse::kRecord;
}

void CsvReader::json_fields(std::string_view line, CsvRecord& rec, std::int64_t line_number, bool header) {
  nlohmann::ordered_json object;
  try {
    object = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    fail(line_number, std::string::npos, std::string("not a JSON object (") + e.what() + ")");
  }
  if (!object.is_object()) fail(line_number, std::string::npos, "not a JSON object");
  if (header)
    for (const auto& [key, value] : object.items()) header_.push_back(key);
  is_string_.assign(header_.size(), false);
  for (std::size_t f = 0; f < header_.size(); ++f) {
    const auto it = object.find(header_[f]);
    const bool required = std::find(strings_.begin(), strings_.end(), f) != strings_.end();  // a text
    if (it == object.end() || it->is_null()) {
      if (required) fail(line_number, f, "no field \"" + header_[f] + "\" in this object" + (it == object.end() ? "" : " (null)"));
      rec.fields.emplace_back();  // a field the caller does not need, or one it checks (an empty class)
    } else if (it->is_string()) {
      rec.fields.push_back(it->get<std::string>());
      is_string_[f] = true;
    } else {
      if (required) fail(line_number, f, "field \"" + header_[f] + "\" must be a string (a text), got " + std::string(it->type_name()));
      rec.fields.push_back(it->dump());  // a number's (an array's) JSON text: a class 0 / 1 / 2 reads as "0" / "1" / "2"
    }
  }
}

bool CsvReader::next(CsvRecord& rec) {
  if (pending_) {  // JSON Lines' first object, read for the header: its string fields checked now that they are named
    rec = std::move(*pending_);
    pending_.reset();
    for (std::size_t f : strings_)
      if (f < is_string_.size() && !is_string_[f]) fail(rec.line, f, "field \"" + header_[f] + "\" must be a string (a text)");
    return true;
  }
  while (true) {
    std::size_t consumed = 0;
    std::int64_t lines = 0;
    const Parse p = parse_record(rec, consumed, lines);
    if (p == Parse::kNeedMore) {
      if (!refill()) return false;
      continue;
    }
    if (p == Parse::kEnd) return false;
    rec.line = line_;
    pos_ += consumed;
    line_ += lines;
    // A blank line is one unquoted empty field: skip it, as pandas and Python's csv do.
    if (rec.fields.size() == 1 && rec.fields[0].empty() && (consumed <= 2 || format_ != TableFormat::kCsv)) continue;
    if (!header_.empty() && rec.fields.size() != header_.size())
      fail(rec.line, std::string::npos,
           "expected " + std::to_string(header_.size()) + " fields (as in the header), found " + std::to_string(rec.fields.size()));
    check_utf8(rec);
    return true;
  }
}

void CsvReader::check_utf8(const CsvRecord& rec) const {
  for (std::size_t f = 0; f < rec.fields.size(); ++f) {
    const std::string& s = rec.fields[f];
    const std::size_t bad = find_invalid_utf8(s);
    if (bad == std::string_view::npos) continue;
    // Report the physical line of the bad byte: the record's first line plus LFs before it.
    std::int64_t line = rec.line;
    for (std::size_t g = 0; g < f; ++g) line += std::count(rec.fields[g].begin(), rec.fields[g].end(), '\n');
    line += std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(s[bad]));
    fail(line, f, std::string("invalid UTF-8 (byte ") + hex + " at offset " + std::to_string(bad) + " of the field)");
  }
}

std::string csv_quote(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace attn::text
