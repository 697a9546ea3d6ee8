#pragma once
/// A streaming reader of the tables public corpora come in, columns chosen by header name:
///   CSV         RFC 4180 as real Kaggle files have it: quoted fields with embedded LF, CRLF or lone
///               CR kept exactly, doubled quotes, commas, CRLF / LF / CR record ends;
///   TSV         a tab between fields, no quoting (OLID's files): a record per line, CRLF or LF;
///   JSON Lines  an object per line (HateXplain, ERASER): the first object's keys are the header,
///               every object must have them; a field holds a string (or a number: its JSON text).
/// A UTF-8 BOM is skipped (TSV: at the start of any line), blank lines are skipped, and every field
/// is checked to be valid UTF-8. Malformed input throws CsvError naming the file, the line and the
/// column (or field).
#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

/// Malformed CSV: the message reads "FILE:LINE: column N (NAME): what".
class CsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Which of the three a file is; kAuto: by its extension (.tsv / .tab: TSV; .jsonl / .ndjson /
/// .json: JSON Lines; anything else: CSV).
enum class TableFormat { kAuto, kCsv, kTsv, kJsonl };
TableFormat format_of(const std::string& path);
/// "csv", "tsv", "jsonl" (or "auto"); anything else throws std::invalid_argument naming `flag`.
TableFormat parse_table_format(const std::string& name, const std::string& flag);

struct CsvRecord {
  std::vector<std::string> fields;
  std::int64_t line = 0;  ///< 1-based line on which the record starts
};

class CsvReader {
 public:
  /// Opens `path` and reads its header row (JSON Lines: its first object's keys); throws
  /// std::runtime_error when it can't be read.
  explicit CsvReader(const std::string& path, TableFormat format = TableFormat::kAuto);
  /// Reads from `in` (kept by reference); `name` is used in messages (and, with kAuto, its extension).
  CsvReader(std::istream& in, std::string name, TableFormat format = TableFormat::kAuto);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  /// Index of the column called `column`, if there is one.
  std::optional<std::size_t> find_column(std::string_view column) const;
  /// Index of the column called `column`; throws CsvError listing the columns there are.
  std::size_t column(std::string_view column) const;

  /// Reads the next record into `record`; false at the end of the file. A record whose field count
  /// differs from the header's (JSON Lines: without one of its fields) is an error.
  bool next(CsvRecord& record);
  /// JSON Lines: column `column` must hold a JSON string (a text), not a number. (CSV and TSV hold text.)
  void require_string(std::size_t column) { strings_.push_back(column); }
  TableFormat format() const { return format_; }

 private:
  enum class Parse { kRecord, kEnd, kNeedMore };
  void read_header();
  Parse parse_record(CsvRecord& record, std::size_t& consumed, std::int64_t& lines);
  Parse parse_line(CsvRecord& record, std::size_t& consumed, std::int64_t& lines);  ///< TSV and JSON Lines
  void json_fields(std::string_view line, CsvRecord& record, std::int64_t line_number, bool header);
  bool refill();
  [[noreturn]] void fail(std::int64_t line, std::size_t field, const std::string& what) const;
  void check_utf8(const CsvRecord& record) const;

  std::unique_ptr<std::ifstream> owned_;
  std::istream* in_;
  std::string name_;
  std::vector<std::string> header_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 1;
  TableFormat format_ = TableFormat::kCsv;
  std::optional<CsvRecord> pending_;  ///< JSON Lines: the first record, read for the header
  std::vector<std::size_t> strings_;  ///< JSON Lines: columns that must hold strings
  std::vector<bool> is_string_;       ///< JSON Lines: which fields of the last object parsed held strings
};

/// `s` as one quoted CSV field (quotes doubled), for writing.
std::string csv_quote(std::string_view s);

}  // namespace attn::text
