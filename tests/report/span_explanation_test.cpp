// A span tagger's explanations: the marked runs of characters (code points, multi-byte text), and
// their renderings.
#include <catch2/catch.hpp>

#include "attn/report/span_explanation.h"

using namespace attn;

namespace {

report::SpanExplanation example() {
  report::SpanExplanation e;
  e.text = "né idiot, go 😀 away";  // "é" two bytes, the emoji four: code points differ from bytes
  report::WordWeight ne{"né", {"né"}, 0.1}, idiot{"idiot,", {"idiot"}, 0.9}, go{"go", {"go"}, 0.2}, face{"😀", {}, 0.0},
      away{"away", {"away"}, 0.7};
  ne.count = idiot.count = go.count = away.count = 1;
  idiot.first = 1, go.first = 2, away.first = 3;
  face.status = report::WordStatus::kFiltered;
  face.reason = "nothing left after filtering";
  e.words = {ne, idiot, go, face, away};
  e.token_probabilities = {0.1f, 0.9f, 0.2f, 0.7f};
  e.spans = {3, 4, 5, 6, 7, 15, 16, 17, 18};  // "idiot" and "away"
  return e;
}

}  // namespace

TEST_CASE("marked_runs: consecutive offsets as runs with their text, by code point", "[report][spans]") {
  const std::vector<report::MarkedRun> runs = report::marked_runs(example().text, example().spans);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].begin == 3);
  CHECK(runs[0].end == 8);
  CHECK(runs[0].text == "idiot");
  CHECK(runs[1].text == "away");
  CHECK(report::marked_runs("😀😀 ab", {0, 1, 3}).front().text == "😀😀");
  CHECK(report::marked_runs("abc", {}).empty());
}

TEST_CASE("span explanations: JSON offsets and runs, text brackets and carets, the page underlines", "[report][spans]") {
  const report::SpanExplanation e = example();
  const nlohmann::ordered_json j = report::to_json(e);
  CHECK(j.at("spans").get<std::vector<std::int64_t>>() == e.spans);
  CHECK(j.at("marked").at(1).at("text") == "away");
  CHECK(j.at("words").at(1).at("probability") == Approx(0.9));
  CHECK(j.at("words").at(3).at("status") == "filtered");
  CHECK(report::to_json_line(e) == j.dump());
  const std::string text = report::to_text(e);
  CHECK(text.rfind("marked: [idiot] [away]\n", 0) == 0);
  CHECK(text.find("^ idiot,") != std::string::npos);
  CHECK(text.find("^ go") == std::string::npos);
  CHECK(text.find("not read: nothing left after filtering") != std::string::npos);
  const std::string html = report::to_html(std::vector<report::SpanExplanation>{e});
  CHECK(html.find("né <u title=\"3-8\">idiot</u>, go 😀 <u title=\"15-19\">away</u>") != std::string::npos);
}
