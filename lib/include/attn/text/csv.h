#pragma once
/// A streaming RFC 4180 CSV reader for real Kaggle files: quoted fields with embedded LF, CRLF or
/// lone CR kept exactly, doubled quotes, commas, an optional UTF-8 BOM, CRLF / LF / CR record ends,
/// blank lines skipped, columns chosen by header name. Every field is checked to be valid UTF-8.
/// Malformed input throws CsvError naming the file, the line and the column.
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

struct CsvRecord {
  std::vector<std::string> fields;
  std::int64_t line = 0;  ///< 1-based line on which the record starts
};

class CsvReader {
 public:
  /// Opens `path` and reads its header row; throws std::runtime_error when it can't be read.
  explicit CsvReader(const std::string& path);
  /// Reads from `in` (kept by reference); `name` is used in messages.
  CsvReader(std::istream& in, std::string name);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  /// Index of the column called `column`, if there is one.
  std::optional<std::size_t> find_column(std::string_view column) const;
  /// Index of the column called `column`; throws CsvError listing the columns there are.
  std::size_t column(std::string_view column) const;

  /// Reads the next record into `record`; false at the end of the file. A record whose field count
  /// differs from the header's is an error.
  bool next(CsvRecord& record);

 private:
  enum class Parse { kRecord, kEnd, kNeedMore };
  Parse parse_record(CsvRecord& record, std::size_t& consumed, std::int64_t& lines);
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
};

/// `s` as one quoted CSV field (quotes doubled), for writing.
std::string csv_quote(std::string_view s);

}  // namespace attn::text
