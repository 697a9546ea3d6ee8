// The generators of the main job's corpora: Jigsaw-format comments and e-mail-like documents whose
// labels one sentence carries (the hierarchical model's test data, attn datagen toxic|documents).
#include <algorithm>
#include <sstream>

#include <catch2/catch.hpp>

#include "attn/data/toxic_corpus.h"
#include "attn/text/csv.h"
#include "attn/text/sentences.h"

using namespace attn;

namespace {

const std::vector<std::string> kLabels = {"toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"};

std::vector<text::CsvRecord> records(const std::string& csv, std::vector<std::string>& header) {
  std::istringstream in(csv);
  text::CsvReader reader(in, "corpus.csv");
  header = reader.header();
  std::vector<text::CsvRecord> out;
  text::CsvRecord r;
  while (reader.next(r)) out.push_back(r);
  return out;
}

}  // namespace

TEST_CASE("toxic corpus: Jigsaw's header, the same bytes for the same options, severe_toxic rows are toxic", "[data][corpus]") {
  data::ToxicCorpusOptions o;
  o.rows = 3000;
  o.label_noise = 0;
  std::ostringstream a, b;
  data::write_toxic_corpus(a, o);
  data::write_toxic_corpus(b, o);
  CHECK(a.str() == b.str());
  std::vector<std::string> header;
  const auto rows = records(a.str(), header);
  std::vector<std::string> expected = {"id", "comment_text"};
  expected.insert(expected.end(), kLabels.begin(), kLabels.end());
  CHECK(header == expected);
  REQUIRE(rows.size() == 3000);
  std::int64_t toxic = 0;
  for (const auto& r : rows) {
    INFO("line " << r.line);
    if (r.fields[3] == "1") CHECK(r.fields[2] == "1");                        // severe_toxic => toxic
    if (r.fields[4] == "1" || r.fields[6] == "1") CHECK(r.fields[2] == "1");  // obscene, insult => toxic
    toxic += r.fields[2] == "1";
  }
  CHECK(toxic > 150);  // Jigsaw's ~10%
  CHECK(toxic < 600);
}

TEST_CASE("document corpus: one sentence carries the labels, and the evidence column names it as ICU splits the text",
          "[data][corpus][sentences]") {
  data::DocumentCorpusOptions o;
  o.rows = 600;
  std::ostringstream a, b;
  data::write_document_corpus(a, o);
  data::write_document_corpus(b, o);
  CHECK(a.str() == b.str());
  std::vector<std::string> header;
  const auto rows = records(a.str(), header);
  REQUIRE(header.back() == "evidence");
  REQUIRE(rows.size() == 600);
  std::int64_t labelled = 0;
  for (const auto& r : rows) {
    INFO("line " << r.line << ": " << r.fields[1]);
    const bool any = std::any_of(r.fields.begin() + 2, r.fields.begin() + 8, [](const std::string& v) { return v == "1"; });
    const auto spans = text::sentence_spans(r.fields[1]);
    const int evidence = std::stoi(r.fields.back());
    CHECK(spans.size() >= 5);  // a greeting, 3 or more sentences, a sign-off
    if (any) {
      ++labelled;
      // Inside the body: neither the greeting nor the sign-off.
      CHECK(evidence >= 2);
      CHECK(evidence < static_cast<int>(spans.size()));
    } else {
      CHECK(evidence == 0);
    }
  }
  CHECK(labelled > 150);  // toxic_rate 0.35 of 600
  CHECK(labelled < 270);
}
