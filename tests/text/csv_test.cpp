#include <sstream>

#include <catch2/catch.hpp>

#include "attn/text/csv.h"

using attn::text::CsvError;
using attn::text::CsvReader;
using attn::text::CsvRecord;

namespace {

std::vector<std::vector<std::string>> read_all(const std::string& data, std::vector<std::int64_t>* lines = nullptr) {
  std::istringstream in(data);
  CsvReader csv(in, "mem.csv");
  std::vector<std::vector<std::string>> rows{csv.header()};
  CsvRecord rec;
  while (csv.next(rec)) {
    rows.push_back(rec.fields);
    if (lines) lines->push_back(rec.line);
  }
  return rows;
}

std::string error_of(const std::string& data) {
  try {
    read_all(data);
  } catch (const CsvError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("quoted fields keep LF, CRLF and lone CR exactly", "[csv]") {
  auto rows = read_all("id,text\r\n1,\"a\nb\"\r\n2,\"c\r\nd\"\r\n3,\"e\rf\"\r\n");
  REQUIRE(rows.size() == 4);
  CHECK(rows[1][1] == "a\nb");
  CHECK(rows[2][1] == "c\r\nd");
  CHECK(rows[3][1] == "e\rf");
}

TEST_CASE("doubled quotes, commas and empty fields", "[csv]") {
  auto rows = read_all("a,b,c\n\"x,y\",\"say \"\"hi\"\"\",\n,\"\",z\n");
  REQUIRE(rows.size() == 3);
  CHECK(rows[1] == std::vector<std::string>{"x,y", "say \"hi\"", ""});
  CHECK(rows[2] == std::vector<std::string>{"", "", "z"});
}

TEST_CASE("BOM is skipped, LF / CRLF / CR record ends, blank lines skipped, no final newline", "[csv]") {
  std::vector<std::int64_t> lines;
  auto rows = read_all("\xEF\xBB\xBFid,text\n1,a\r\n\r\n2,b\r3,\"multi\nline\"\n4,last", &lines);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0][0] == "id");
  CHECK(rows[1][1] == "a");
  CHECK(rows[2][1] == "b");
  CHECK(rows[3][1] == "multi\nline");
  CHECK(rows[4][1] == "last");
  CHECK(lines == std::vector<std::int64_t>{2, 4, 5, 7});
}

TEST_CASE("records larger than the read buffer and many records stream correctly", "[csv]") {
  std::string big(3 << 20, 'x');
  big[12345] = '\n';
  std::string data = "id,text\n1,\"" + big + "\"\n";
  for (int i = 0; i < 50000; ++i) data += std::to_string(i) + ",\"w" + std::to_string(i) + "\"\"q\"\r\n";
  auto rows = read_all(data);
  REQUIRE(rows.size() == 50002);
  CHECK(rows[1][1] == big);
  CHECK(rows[50001][1] == "w49999\"q");
}

TEST_CASE("columns are found by header name", "[csv]") {
  std::istringstream in("id,comment_text,toxic\n1,hi,0\n");
  CsvReader csv(in, "train.csv");
  CHECK(csv.column("toxic") == 2);
  CHECK_FALSE(csv.find_column("nope"));
  CHECK_THROWS_WITH(csv.column("nope"),
                    Catch::Contains("train.csv:1: no column 'nope'") && Catch::Contains("columns: id, comment_text, toxic"));
}

TEST_CASE("malformed CSV names file, line and column", "[csv]") {
  CHECK_THAT(error_of("id,text\n1,ok\n2,\"never closed\n3,x\n"), Catch::Contains("mem.csv:3: column 2 (text): unterminated quoted field"));
  CHECK_THAT(error_of("id,text\n1,ok\n2,a,extra\n"), Catch::Contains("mem.csv:3: expected 2 fields") && Catch::Contains("found 3"));
  CHECK_THAT(error_of("id,text\n1,\"a\"b\n"), Catch::Contains("mem.csv:2: column 2 (text): unexpected character 'b'"));
  CHECK_THAT(error_of("id,text\n1,\"line\nbad \xC3\x28\"\n"),
             Catch::Contains("mem.csv:3: column 2 (text): invalid UTF-8 (byte 0xC3 at offset 9"));
  CHECK_THAT(error_of("id,text\n1,\xED\xA0\x80\n"), Catch::Contains("invalid UTF-8"));  // a UTF-16 surrogate
  CHECK_THAT(error_of("id,text\n1,\xC0\xAF\n"), Catch::Contains("invalid UTF-8"));      // an overlong '/'
  CHECK_THAT(error_of(""), Catch::Contains("empty file"));
}

TEST_CASE("a missing file is a clear error", "[csv]") {
  CHECK_THROWS_WITH(CsvReader("/nonexistent/train.csv"), Catch::Contains("/nonexistent/train.csv: cannot open"));
}
