// Rendering explanations: the JSON every surface shares, terminal text, HTML and SVG.
#include <catch2/catch.hpp>

#include "attn/report/explanation.h"
#include "attn/report/plots.h"

using namespace attn;

namespace {
report::TextExplanation sample_text() {
  report::TextExplanation e;
  e.text = "ice <cream> sucks zzz";
  e.label_names = {"toxic", "insult"};
  e.probabilities = {0.9f, 0.25f};
  e.words = {{"ice", {"ice"}, 0.25, report::WordStatus::kKept, ""},
             {"<cream>", {"cream"}, 0.0, report::WordStatus::kKept, ""},
             {"sucks", {"sucks"}, 0.75, report::WordStatus::kKept, ""},
             {"zzz", {"zzz"}, 0.0, report::WordStatus::kDropped, "unknown word"}};
  e.ids = {4, 9, 2};
  e.attention = {0.25f, 0.0f, 0.75f};
  return e;
}
}  // namespace

TEST_CASE("text explanations: JSON fields, one line per word, dropped words say why", "[report]") {
  const auto e = sample_text();
  const auto j = report::to_json(e);
  CHECK(j.at("probabilities").at("toxic").get<float>() == 0.9f);
  CHECK(j.at("words").size() == 4);
  CHECK(j.at("words")[3].at("reason") == "unknown word");
  CHECK_FALSE(j.at("words")[0].contains("reason"));
  CHECK_FALSE(j.contains("self_attention"));
  const std::string text = report::to_text(e);
  CHECK_THAT(text, Catch::StartsWith("ice <cream> sucks zzz\n  toxic 0.9000 insult 0.2500\n"));
  CHECK_THAT(text, Catch::Contains("  sucks                0.7500 ##############################\n"));
  CHECK_THAT(text, Catch::Contains("  zzz                  dropped (unknown word)\n"));
  const std::string html = report::to_html({e});
  CHECK_THAT(html, Catch::StartsWith("<!DOCTYPE html>") && Catch::Contains("&lt;cream&gt;") && Catch::Contains("rgba(220,40,40,1.000)"));
  CHECK(report::to_svg({e}).empty());
}

TEST_CASE("to_json_line writes exactly to_json's document, without building it", "[report]") {
  auto e = sample_text();
  e.text = "quotes \" and \\ and \n\r\t\b\f and \x01\x1f\x7f and \xc3\xa9 \xf0\x9f\x98\x80";
  e.words[0].tokens = {"a\"b", "\x02"};
  e.words[0].weight = 1.0 / 3.0;
  e.attention = {0.0f, 1e-9f, 123456.5f, -0.25f};
  e.probabilities[0] = 1.0f;
  CHECK(report::to_json_line(e) == report::to_json(e).dump());
  e.self_attention = {{{1.0f, 0.0f, 0.5f, 0.5f}}, {{0.1f, 0.9f, 0.2f, 0.8f}}};  // the optional key
  CHECK(report::to_json_line(e) == report::to_json(e).dump());
  nlohmann::ordered_json without = report::to_json(e);
  without.erase("self_attention");
  CHECK(report::to_json_line(e, report::SelfAttention::kOmit) == without.dump());
  e.words.clear();  // and no words at all
  CHECK(report::to_json_line(e) == report::to_json(e).dump());
  CHECK(nlohmann::ordered_json::parse(report::to_json_line(e)) == report::to_json(e));
}

TEST_CASE("feature explanations: bars per feature, one chart, of the mean for several rows", "[report]") {
  const report::FeatureExplanation a{{"x0", "x1"}, "label", {1.0f, -2.0f}, 0.75f, {0.2f, 0.8f}, {}, {}, {}, {}};
  const report::FeatureExplanation b{{"x0", "x1"}, "label", {0.0f, 0.0f}, 0.5f, {0.6f, 0.4f}, {}, {}, {}, {}};
  CHECK_THAT(report::to_text(a), Catch::StartsWith("P(label = 1) = 0.7500\n  x0                   1.0000  weight 0.2000 ########\n"));
  CHECK(
      report::to_json(a).dump() ==
      R"({"probability":0.75,"label":"label","features":[{"feature":"x0","value":1.0,"weight":0.20000000298023224},{"feature":"x1","value":-2.0,"weight":0.800000011920929}]})");
  const auto svg = report::to_svg({a, b});
  REQUIRE(svg.size() == 1);
  CHECK_THAT(svg[0], Catch::Contains("Mean attention per feature (2 rows)") && Catch::Contains("x1: 0.6000"));
  CHECK_THAT(report::to_svg({a})[0], Catch::Contains("Attention per feature"));
}

TEST_CASE("alignments: a heatmap per input, characters shown visibly", "[report]") {
  const report::AlignmentExplanation e{"9 may", "05", {"9", " ", "m"}, {"0", "5"}, {0.0f, 0.1f, 0.9f, 1.0f, 0.0f, 0.0f}, {}, {}};
  const std::string text = report::to_text(e);
  CHECK_THAT(text, Catch::StartsWith("9 may -> 05\n    9\xe2\x90\xa3m\n  0  .%\n  5 @  \n"));
  const auto svg = report::to_svg({e, e});
  CHECK(svg.size() == 2);
  CHECK_THAT(svg[0], Catch::StartsWith("<svg") && Catch::Contains("9 may -&gt; 05"));
  CHECK_THAT(report::to_html({e}), Catch::Contains("<h1>Attention: output x input</h1>"));
}

TEST_CASE("a document's sentences: weights, words within each, statuses, in JSON, text and HTML", "[report]") {
  report::TextExplanation e;
  e.text = "Hi <Tom>. You suck!\n!!!";
  e.label_names = {"toxic"};
  e.probabilities = {0.8f};
  e.words = {{"Hi", {"hi"}, 0.06, report::WordStatus::kKept, "", 0, 1},
             {"<Tom>.", {"tom"}, 0.14, report::WordStatus::kKept, "", 1, 1},
             {"You", {"you"}, 0.24, report::WordStatus::kKept, "", 2, 1},
             {"suck!", {"suck"}, 0.56, report::WordStatus::kKept, "", 3, 1},
             {"!!!", {}, 0.0, report::WordStatus::kFiltered, "only filtered characters"}};
  e.ids = {5, 6, 7 + (1 << 20), 8 + (1 << 20)};
  e.word_attention = {0.3f, 0.7f, 0.3f, 0.7f};
  e.sentence_attention = {0.2f, 0.2f, 0.8f, 0.8f};
  e.attention = {0.06f, 0.14f, 0.24f, 0.56f};
  e.sentences = {{"Hi <Tom>.", 0.2, report::SentenceStatus::kRead, "", 0, 2},
                 {"You suck!", 0.8, report::SentenceStatus::kRead, "", 2, 2},
                 {"!!!", 0.0, report::SentenceStatus::kEmpty, "no word the tokenizer keeps", 4, 1}};
  const auto j = report::to_json(e);
  REQUIRE(j.at("sentences").size() == 3);
  CHECK(j["sentences"][1]["weight"].get<double>() == 0.8);
  CHECK(j["sentences"][1]["words"][1]["word"] == "suck!");
  CHECK(j["sentences"][1]["words"][1]["weight"].get<double>() == Approx(0.7));  // within its sentence
  CHECK(j["sentences"][1]["words"][1]["effective"].get<double>() == 0.56);      // sentence x word
  CHECK(j["sentences"][2]["reason"] == "no word the tokenizer keeps");
  CHECK(report::to_json_line(e) == j.dump());
  const std::string text = report::to_text(e);
  CHECK_THAT(text, Catch::Contains("  sentence 2 0.8000 ################################  You suck!\n"));
  CHECK_THAT(text, Catch::Contains("    suck!                0.5600 (in its sentence 0.7000) "));
  CHECK_THAT(text, Catch::Contains("  sentence 3 empty (no word the tokenizer keeps): !!!\n"));
  const std::string html = report::to_html({e});
  CHECK_THAT(html, Catch::Contains("data-weight=\"0.800000\"") && Catch::Contains("&lt;Tom&gt;.") &&
                       Catch::Contains("<div class=\"sbar\" style=\"width:96px\">"));
  // Yang et al.'s display: the lesser sentence's strongest word is dimmed by sqrt(0.2 / 0.8) = 0.5.
  CHECK_THAT(html, Catch::Contains("rgba(220,40,40,0.500)"));
}

TEST_CASE("text explanations with several methods: HTML shows one row of shaded words per method, for the shown label",
          "[report][importance]") {
  auto e = sample_text();
  for (std::size_t i = 0; i < 3; ++i) e.words[i].first = i, e.words[i].count = 1;
  e.importance = {{"attention", {{0.25f, 0.0f, 0.75f}, {0.5f, 0.0f, 0.5f}}},
                  {"integrated-gradients", {{-0.4f, 0.0f, 0.8f}, {0.1f, 0.2f, -0.05f}}}};
  e.shown_label = 0;
  const std::string html = report::to_html({e});
  CHECK_THAT(html, Catch::Contains("<table class=\"methods\"><tr><th colspan=\"2\">importance for toxic</th></tr>") &&
                       Catch::Contains("<tr data-method=\"attention\"><td>attention</td>") &&
                       Catch::Contains("<tr data-method=\"integrated-gradients\"><td>integrated-gradients</td>"));
  const auto row = [&](const std::string& method) {
    const auto at = html.find("<tr data-method=\"" + method + "\">");
    REQUIRE(at != std::string::npos);
    return html.substr(at, html.find("</tr>", at) - at);
  };
  // Each row is scaled by its own largest |score|: red for the label, blue against it, the dropped word greyed with its reason.
  const std::string ig = row("integrated-gradients");
  CHECK_THAT(ig, Catch::Contains("background:rgba(40,90,220,0.500)\" title=\"-0.4\">ice</span>") &&
                     Catch::Contains("background:rgba(220,40,40,1.000)\" title=\"0.8\">sucks</span>") &&
                     Catch::Contains("<span class=\"w dropped\" title=\"unknown word\">zzz</span>"));
  CHECK_THAT(row("attention"), Catch::Contains("background:rgba(220,40,40,0.333)\" title=\"0.25\">ice</span>"));
  // Another shown label: the same rows with that label's scores.
  e.shown_label = 1;
  const std::string insult = report::to_html({e});
  CHECK_THAT(insult, Catch::Contains("importance for insult") && Catch::Contains("title=\"-0.05\">sucks</span>"));
}
