// Human rationales in ERASER's and Toxic Spans' formats (data/rationales.h), on generated files.
#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <catch2/catch.hpp>

#include "attn/data/rationales.h"

using namespace attn;

namespace {

std::string rationale_file(const std::string& name, const std::string& content) {
  const auto d = std::filesystem::temp_directory_path() / ("attn_rationales_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  const std::string path = (d / name).string();
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

const char* kDocs = R"({"docid": "d1", "document": "you are a total idiot"}
{"docid": "d2", "document": "have a  nice day"}
)";

}  // namespace

TEST_CASE("ERASER rationales: words are document.split(' '), evidences marked, rows without one skipped", "[data][rationales]") {
  const std::string docs = rationale_file("docs.jsonl", kDocs);
  const std::string lines = rationale_file(
      "a.jsonl",
      R"({"annotation_id": "d1", "classification": "toxic", "evidences": [[{"docid": "d1", "start_token": 3, "end_token": 5}, {"docid": "d1", "start_token": 0, "end_token": 1}]]}
{"annotation_id": "d2", "classification": "non-toxic", "evidences": []}
)");
  const std::string array = rationale_file(
      "a.json",
      R"([{"annotation_id": "d1", "classification": "toxic", "evidences": [[{"docid": "d1", "start_token": 3, "end_token": 5}, {"docid": "d1", "start_token": 0, "end_token": 1}]]}])");
  for (const std::string& annotations : {lines, array}) {
    const auto rows = data::read_eraser_rationales(annotations, docs);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].id == "d1");
    CHECK(rows[0].label == "toxic");
    CHECK(rows[0].text == "you are a total idiot");
    CHECK(rows[0].marked == std::vector<std::uint8_t>{1, 0, 0, 1, 1});
    CHECK(rows[0].spans == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {3, 5}});
  }
  // two spaces make an empty word, as Python's split(' ')
  const auto two = data::read_eraser_rationales(
      rationale_file(
          "b.jsonl",
          R"({"annotation_id": "x", "classification": "t", "evidences": [[{"docid": "d2", "start_token": 3, "end_token": 4}]]})"),
      docs);
  CHECK(two.at(0).words == std::vector<std::string>{"have", "a", "", "nice", "day"});
}

TEST_CASE("ERASER rationales: bad files are refused naming file, line and field", "[data][rationales]") {
  const std::string docs = rationale_file("docs.jsonl", kDocs);
  const auto refused = [&](const std::string& line, const std::string& what) {
    const std::string f = rationale_file("bad.jsonl", "\n" + line + "\n");
    CHECK_THROWS_WITH(data::read_eraser_rationales(f, docs), Catch::Contains("bad.jsonl:2") && Catch::Contains(what));
  };
  refused(R"({"annotation_id": "d1", "classification": "t", "evidences": [[{"docid": "zz", "start_token": 0, "end_token": 1}]]})",
          "'zz' is not in");
  refused(R"({"annotation_id": "d1", "classification": "t", "evidences": [[{"docid": "d1", "start_token": 4, "end_token": 9}]]})",
          "outside its 5 words");
  refused(R"({"annotation_id": "d1", "classification": "t", "evidences": [[{"docid": "d1", "start_token": 2, "end_token": 2}]]})",
          "empty span");
  refused(
      R"({"annotation_id": "d1", "classification": "t", "evidences": [[{"docid": "d1", "start_token": 0, "end_token": 3}, {"docid": "d1", "start_token": 2, "end_token": 4}]]})",
      "overlapping");
  refused(R"({"annotation_id": "d1", "evidences": []})", "'classification'");
  refused(R"({"annotation_id": "d1", "classification": "t", "evidences": [[{"docid": "d1", "start_token": "0", "end_token": 1}]]})",
          "'start_token' must be an integer");
  refused("{not json", "not valid JSON");
  CHECK_THROWS_WITH(
      data::read_eraser_rationales(rationale_file("ok.jsonl", ""), rationale_file("d.jsonl", "{\"docid\": 1, \"document\": \"x\"}\n")),
      Catch::Contains("d.jsonl:1") && Catch::Contains("'docid' must be a string"));
}

TEST_CASE("Toxic Spans: character indices (code points) mark the words they fall in", "[data][rationales]") {
  // "Ça" is two characters (three bytes): "idiot" starts at character 10
  const std::string f = rationale_file("spans.csv",
                                       "spans,text\n\"[10, 11, 12, 13, 14]\",Ça va you idiot\n\"[]\",nothing marked here\n"
                                       "\"[0, 1, 2, 7]\",\"what a\nmess\"\n");
  const auto rows = data::read_toxic_spans(f);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].id == "1");
  CHECK(rows[0].words == std::vector<std::string>{"Ça", "va", "you", "idiot"});
  CHECK(rows[0].marked == std::vector<std::uint8_t>{0, 0, 0, 1});
  CHECK(rows[1].id == "3");
  CHECK(rows[1].words == std::vector<std::string>{"what", "a", "mess"});  // a newline separates words too
  CHECK(rows[1].marked == std::vector<std::uint8_t>{1, 0, 1});
  CHECK(rows[1].spans == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {2, 3}});
  CHECK_THROWS_WITH(data::read_toxic_spans(rationale_file("s1.csv", "spans,text\n\"[1, x]\",abc\n")),
                    Catch::Contains("s1.csv:2") && Catch::Contains("(spans)"));
  CHECK_THROWS_WITH(data::read_toxic_spans(rationale_file("s2.csv", "spans,text\n\"[1, \"\"a\"\"]\",abc\n")), Catch::Contains("s2.csv:2"));
  CHECK_THROWS_WITH(data::read_toxic_spans(rationale_file("s3.csv", "spans,text\n\"[3]\",abc\n")),
                    Catch::Contains("s3.csv:2") && Catch::Contains("outside the text's 3 characters"));
  CHECK_THROWS_WITH(data::read_toxic_spans(rationale_file("s4.csv", "text\nabc\n")), Catch::Contains("spans"));
}
