// attn spans through the tasks layer: a text's words chosen by attention become the characters
// SemEval marks; the file's marks scored by character F1; the predictions file; what it refuses.
#include "attn/analyses/spans.h"

#include <fstream>
#include <sstream>

#include "../tasks/tasks_test_util.h"
#include "attn/io/atomic_file.h"
#include "attn/metrics/spans.h"
#include "attn/text/csv.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("spans: the words at or above the threshold share of the highest weight, as characters", "[analyses][spans]") {
  const std::string t = "you stupid, idiot";
  CHECK(analyses::attended_offsets(t, {0.1, 0.6, 0.25}, 0.5) == std::vector<std::int64_t>{4, 5, 6, 7, 8, 9});
  // 0.25 >= 0.4 x 0.6: both, with the ", " between them.
  CHECK(analyses::attended_offsets(t, {0.1, 0.6, 0.25}, 0.4) == std::vector<std::int64_t>{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  CHECK(analyses::attended_offsets(t, {0.0, 0.0, 0.0}, 0.5).empty());  // no word read: nothing marked
  CHECK(analyses::attended_offsets("", {}, 0.5).empty());
}

TEST_CASE("spans: a text classifier's spans of a marked file, scored as SemEval scores them, written per row", "[analyses][spans]") {
  const auto dir = scratch("spans");
  class_model(dir, 30, 10);
  const std::string csv = write_csv(dir / "tsd.csv", "spans,text",
                                    {"\"[0, 1, 2, 3]\",idiot thanks see", "[],thanks for this", "\"[5, 6]\",\"see, stupid\"", "[],"});
  analyses::SpansRequest r;
  r.model = (dir / "run").string();
  r.csv = csv;
  r.predictions = (dir / "p.csv").string();
  r.json = (dir / "s.json").string();
  const auto printed = nlohmann::json::parse(analyses::spans(r));
  CHECK(printed.at("rows") == 4);
  const auto all = nlohmann::json::parse(io::read_file(r.json));
  REQUIRE(all.at("per_row").size() == 4);
  std::vector<std::vector<std::int64_t>> predicted;
  for (const auto& row : all.at("per_row")) predicted.push_back(row.at("spans").get<std::vector<std::int64_t>>());
  // Every text with a word read gets its highest-weighted word at least; the empty text none.
  CHECK_FALSE(predicted[0].empty());
  CHECK(predicted[3].empty());
  const metrics::SpanScores expected = metrics::span_scores(predicted, {{0, 1, 2, 3}, {}, {5, 6}, {}});
  CHECK(printed.at("f1").get<double>() == Approx(expected.f1));
  CHECK(printed.at("precision").get<double>() == Approx(expected.precision));
  // The predictions: SemEval's id (the row's position) and spans, a JSON list in a CSV field.
  std::istringstream lines(io::read_file(r.predictions));
  text::CsvReader reader(lines, "p.csv");
  CHECK(reader.header() == std::vector<std::string>{"id", "spans"});
  text::CsvRecord record;
  for (std::size_t i = 0; i < 4; ++i) {
    REQUIRE(reader.next(record));
    CHECK(record.fields[0] == std::to_string(i));
    CHECK(nlohmann::json::parse(record.fields[1]).get<std::vector<std::int64_t>>() == predicted[i]);
  }
  // A higher threshold keeps fewer characters, never more.
  r.threshold = 1.0;
  r.json = (dir / "s1.json").string();
  analyses::spans(r);
  const auto strict = nlohmann::json::parse(io::read_file(r.json)).at("per_row");
  for (std::size_t i = 0; i < 4; ++i) CHECK(strict[i].at("spans").size() <= predicted[i].size());
  fs::remove_all(dir);
}

TEST_CASE("spans: bad marks, a missing column, a threshold out of range, a model that is not a text classifier", "[analyses][spans]") {
  const auto dir = scratch("spans_bad");
  class_model(dir, 30, 10);
  analyses::SpansRequest r;
  r.model = (dir / "run").string();
  r.csv = write_csv(dir / "bad.csv", "text,spans", {"idiot,[0]", "see you,\"[1, \"\"a\"\"]\""});
  CHECK_THROWS_WITH(analyses::spans(r), Catch::Contains("bad.csv:3: column 2 (spans) not a list of integers"));
  r.csv = write_csv(dir / "far.csv", "text,spans", {"idiot,[5]"});
  CHECK_THROWS_WITH(analyses::spans(r), Catch::Contains("far.csv:2: column 2 (spans) index 5 outside the text's 5 characters"));
  r.csv = write_csv(dir / "neg.csv", "text,spans", {"idiot,[-1]"});
  CHECK_THROWS_WITH(analyses::spans(r), Catch::Contains("neg.csv:2: column 2 (spans) index -1"));
  r.csv = write_csv(dir / "other.csv", "comment,spans", {"idiot,[0]"});
  CHECK_THROWS_WITH(analyses::spans(r), Catch::Contains("text"));
  r.csv = write_csv(dir / "ok.csv", "text", {"idiot"});
  r.threshold = 0;
  CHECK_THROWS_AS(analyses::spans(r), std::invalid_argument);
  r.threshold = 0.5;
  std::vector<std::string> rows;
  for (int i = 0; i < 120; ++i) rows.push_back(std::to_string(i % 7) + "," + std::to_string(i % 5) + "," + (i % 7 > i % 5 ? "1" : "0"));
  const std::string features = write_csv(dir / "f.csv", "a,b,label", rows);
  saved_model("feature-attention", dir / "features", {{"csv", features}});
  r.model = (dir / "features").string();
  CHECK_THROWS_WITH(analyses::spans(r), Catch::Contains("is neither"));
  fs::remove_all(dir);
}
