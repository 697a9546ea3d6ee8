// The generators of the main job's corpora: Jigsaw-format comments and e-mail-like documents whose
// labels one sentence carries (the hierarchical model's test data), Civil Comments in Jigsaw 2019's
// layout (attn datagen toxic|documents|civil).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

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

/// The corpus `write` makes with `o`, written twice: the same bytes (checked), read as records.
template <class Options>
std::vector<text::CsvRecord> written_twice(void (*write)(std::ostream&, const Options&), const Options& o,
                                           std::vector<std::string>& header) {
  std::ostringstream a, b;
  write(a, o);
  write(b, o);
  CHECK(a.str() == b.str());
  return records(a.str(), header);
}

}  // namespace

TEST_CASE("toxic corpus: Jigsaw's header, the same bytes for the same options, severe_toxic rows are toxic", "[data][corpus]") {
  data::ToxicCorpusOptions o;
  o.rows = 3000;
  o.label_noise = 0;
  std::vector<std::string> header;
  const auto rows = written_twice(data::write_toxic_corpus, o, header);
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
  std::vector<std::string> header;
  const auto rows = written_twice(data::write_document_corpus, o, header);
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

TEST_CASE("civil corpus: Jigsaw 2019's layout, shares of raters, identities annotated on a quarter, the planted bias", "[data][corpus]") {
  data::CivilCorpusOptions o;
  o.rows = 6000;
  std::vector<std::string> header;
  const auto rows = written_twice(data::write_civil_corpus, o, header);
  REQUIRE(rows.size() == 6000);
  CHECK(header.size() == 8 + 9 + 1 + 2);  // id, target, text, 5 subtypes; 9 identities; sexual_explicit; 2 counts
  CHECK(std::vector<std::string>(header.begin(), header.begin() + 3) == std::vector<std::string>{"id", "target", "comment_text"});
  CHECK(header[13] == "muslim");
  CHECK(header[17] == "sexual_explicit");
  CHECK(header.back() == "toxicity_annotator_count");
  std::int64_t annotated = 0, toxic = 0, muslims = 0, toxic_muslims = 0, christians = 0, toxic_christians = 0;
  for (const auto& r : rows) {
    INFO("line " << r.line);
    const int raters = std::stoi(r.fields.back());
    const double target = std::stod(r.fields[1]);
    CHECK(target >= 0);
    CHECK(target <= 1);
    CHECK(std::abs(target * raters - std::round(target * raters)) < 1e-4);  // k of n raters
    const bool has = !r.fields[8].empty();
    annotated += has;
    CHECK((r.fields[18] != "0") == has);  // identity_annotator_count, iff the identities are filled
    const double sexual = std::stod(r.fields[17]);
    CHECK(sexual >= 0);
    CHECK(sexual <= 1);
    toxic += target >= 0.5;
    if (has && std::stod(r.fields[13]) >= 0.5) muslims += 1, toxic_muslims += target >= 0.5;
    if (has && std::stod(r.fields[11]) >= 0.5) christians += 1, toxic_christians += target >= 0.5;
  }
  CHECK(annotated > 1200);
  CHECK(annotated < 1800);
  CHECK(toxic > 300);
  // The planted bias: comments naming muslims (biased) are toxic more often than those naming christians.
  REQUIRE(muslims > 30);
  REQUIRE(christians > 30);
  CHECK(static_cast<double>(toxic_muslims) / muslims > 1.5 * static_cast<double>(toxic_christians) / christians);
  data::CivilCorpusOptions bad = o;
  bad.biased = {"martians"};
  std::ostringstream c;
  CHECK_THROWS_WITH(data::write_civil_corpus(c, bad), Catch::Contains("'martians' is not one of the scored identities"));
}

TEST_CASE("spans corpus: Toxic Spans' layout, each marked run an insult's letters or a whole threat, some posts unmarked",
          "[data][corpus]") {
  data::SpansCorpusOptions o;
  o.rows = 400;
  std::vector<std::string> header;
  const std::vector<text::CsvRecord> rows = written_twice(data::write_spans_corpus, o, header);
  REQUIRE(header == std::vector<std::string>{"spans", "text"});
  REQUIRE(rows.size() == 400);
  const std::vector<std::string> insults = {"stupid", "idiot",   "moron", "loser", "pathetic",   "sucks", "worthless", "crap",
                                            "damn",   "garbage", "dumb",  "fool",  "disgusting", "hate",  "shut",      "ugly"};
  int unmarked = 0, threats = 0;
  for (const text::CsvRecord& r : rows) {
    const std::string& text = r.fields[1];
    const nlohmann::json offsets = nlohmann::json::parse(r.fields[0]);
    if (offsets.empty()) ++unmarked;
    // the runs of consecutive offsets, as text
    std::vector<std::string> runs;
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const auto at = offsets[i].get<std::size_t>();
      REQUIRE(at < text.size());
      if (i == 0 || offsets[i - 1].get<std::size_t>() + 1 != at) runs.emplace_back();
      runs.back() += text[at];
    }
    REQUIRE(runs.size() <= 1);
    if (runs.empty()) continue;
    const bool insult = std::find(insults.begin(), insults.end(), runs[0]) != insults.end();
    threats += !insult;
    CHECK((insult || runs[0].find(' ') != std::string::npos));  // a threat: a phrase, marked whole
  }
  CHECK(unmarked > 20);
  CHECK(unmarked < 120);
  CHECK(threats > 20);
}
