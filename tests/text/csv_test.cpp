#include <sstream>

#include <catch2/catch.hpp>

#include "attn/text/csv.h"

using attn::text::CsvError;
using attn::text::CsvReader;
using attn::text::CsvRecord;

namespace {

std::vector<std::vector<std::string>> read_all(const std::string& data, std::vector<std::int64_t>* lines = nullptr,
                                               const std::string& name = "mem.csv") {
  std::istringstream in(data);
  CsvReader csv(in, name);
  std::vector<std::vector<std::string>> rows{csv.header()};
  CsvRecord rec;
  while (csv.next(rec)) {
    rows.push_back(rec.fields);
    if (lines) lines->push_back(rec.line);
  }
  return rows;
}

std::string error_of(const std::string& data, const std::string& name = "mem.csv") {
  try {
    read_all(data, nullptr, name);
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

TEST_CASE("the format follows the extension unless given", "[csv]") {
  using attn::text::TableFormat;
  CHECK(attn::text::format_of("a/train.tsv") == TableFormat::kTsv);
  CHECK(attn::text::format_of("olid-training-v1.0.TAB") == TableFormat::kTsv);
  CHECK(attn::text::format_of("docs.jsonl") == TableFormat::kJsonl);
  CHECK(attn::text::format_of("x.ndjson") == TableFormat::kJsonl);
  CHECK(attn::text::format_of("train.csv") == TableFormat::kCsv);
  CHECK(attn::text::format_of("labeled_data") == TableFormat::kCsv);
  CHECK(attn::text::parse_table_format("tsv", "--format") == TableFormat::kTsv);
  CHECK_THROWS_WITH(attn::text::parse_table_format("xlsx", "--format"), Catch::Contains("--format: csv, tsv or jsonl, got 'xlsx'"));
  std::istringstream in("a\tb\n1\t2\n");
  CsvReader csv(in, "given.csv", TableFormat::kTsv);  // the format given wins over the name
  CHECK(csv.header() == std::vector<std::string>{"a", "b"});
}

TEST_CASE("TSV as OLID has it: no quoting, CRLF or LF, a BOM at the start of any line, blank lines skipped", "[csv]") {
  std::vector<std::int64_t> lines;
  const auto rows = read_all(
      "\xEF\xBB\xBFid\ttweet\tsubtask_a\r\n86426\t@USER \"She\" says, \"no\"\tOFF\r\n\r\n"
      "\xEF\xBB\xBF"
      "90194\tit's fine\tNOT\n",
      &lines, "olid.tsv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"id", "tweet", "subtask_a"});
  CHECK(rows[1] == std::vector<std::string>{"86426", "@USER \"She\" says, \"no\"", "OFF"});  // quotes and commas are text
  CHECK(rows[2] == std::vector<std::string>{"90194", "it's fine", "NOT"});
  CHECK(lines == std::vector<std::int64_t>{2, 4});
  CHECK_THAT(error_of("id\ttweet\n1\ta\tb\n", "olid.tsv"), Catch::Contains("olid.tsv:2: expected 2 fields") && Catch::Contains("found 3"));
  CHECK_THAT(error_of("id\ttweet\n1\t\xC3\x28\n", "olid.tsv"), Catch::Contains("olid.tsv:2: column 2 (tweet): invalid UTF-8"));
}

TEST_CASE("JSON Lines: the first object's keys are the columns, numbers read as their text, blank lines skipped", "[csv]") {
  std::vector<std::int64_t> lines;
  const auto rows = read_all(
      "{\"post_id\": \"1_gab\", \"text\": \"a \\\"quoted\\\"\\nline\", \"label\": 2, \"extra\": [1]}\r\n\n"
      "{\"text\": \"second\", \"post_id\": \"2_tw\", \"label\": 0, \"extra\": null, \"more\": 1}\n",
      &lines, "docs.jsonl");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<std::string>{"post_id", "text", "label", "extra"});
  CHECK(rows[1] == std::vector<std::string>{"1_gab", "a \"quoted\"\nline", "2", "[1]"});
  CHECK(rows[2] == std::vector<std::string>{"2_tw", "second", "0", ""});  // by key; null: empty; keys not in the first ignored
  CHECK(lines == std::vector<std::int64_t>{1, 3});
}

TEST_CASE("JSON Lines errors name file, line and field: not an object, a missing or non-string text", "[csv]") {
  CHECK_THAT(error_of("{\"text\": \"a\"}\n[1, 2]\n", "d.jsonl"), Catch::Contains("d.jsonl:2") && Catch::Contains("not a JSON object"));
  CHECK_THAT(error_of("{\"text\": \"a\"}\n{\"text\": \"b\"\n", "d.jsonl"),
             Catch::Contains("d.jsonl:2") && Catch::Contains("not a JSON object"));
  const auto text_error = [](const std::string& data) {
    std::istringstream in(data);
    try {
      CsvReader csv(in, "d.jsonl");
      csv.require_string(csv.column("text"));
      CsvRecord rec;
      while (csv.next(rec)) {
      }
    } catch (const CsvError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(text_error("{\"id\": 1, \"text\": \"a\"}\n{\"id\": 2}\n"),
             Catch::Contains("d.jsonl:2: column 2 (text)") && Catch::Contains("no field \"text\""));
  CHECK_THAT(text_error("{\"id\": 1, \"text\": \"a\"}\n{\"id\": 2, \"text\": 7}\n"),
             Catch::Contains("d.jsonl:2: column 2 (text)") && Catch::Contains("must be a string"));
  CHECK_THAT(text_error("{\"id\": 1, \"text\": 5}\n"),
             Catch::Contains("d.jsonl:1: column 2 (text)") && Catch::Contains("must be a string"));
  CHECK(text_error("{\"id\": 1, \"text\": \"a\"}\n{\"id\": 2, \"text\": \"b\"}\n").empty());
}
