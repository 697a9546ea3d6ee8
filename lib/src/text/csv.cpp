#include "attn/text/csv.h"

#include <algorithm>
#include <cstring>

#include "attn/text/unicode.h"

namespace attn::text {
namespace {
constexpr std::size_t kBlock = 1 << 20;
}

CsvReader::CsvReader(const std::string& path)
    : owned_(std::make_unique<std::ifstream>(path, std::ios::binary)), in_(owned_.get()), name_(path) {
  if (!*owned_) throw std::runtime_error(path + ": cannot open file for reading");
  CsvRecord head;
  if (!next(head)) throw CsvError(name_ + ": empty file (expected a header row)");
  header_ = std::move(head.fields);
}

CsvReader::CsvReader(std::istream& in, std::string name) : in_(&in), name_(std::move(name)) {
  CsvRecord head;
  if (!next(head)) throw CsvError(name_ + ": empty file (expected a header row)");
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

bool CsvReader::next(CsvRecord& rec) {
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
    if (rec.fields.size() == 1 && rec.fields[0].empty() && consumed <= 2) continue;
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
