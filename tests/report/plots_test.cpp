// The pictures: bar charts and heatmaps as SVG and text, pages, escaping.
#include <regex>

#include <catch2/catch.hpp>

#include "attn/report/plots.h"

using namespace attn;

TEST_CASE("a bar chart: a bar per name, its height by its value, names escaped", "[report][plots]") {
  const std::string svg = report::svg_bar_chart("weights <x>", {"a&b", "c"}, {0.25, 1.0});
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK_THAT(svg, Catch::Contains("weights &lt;x&gt;") && Catch::Contains("a&amp;b"));
  const std::regex bar(R"re(<rect[^>]*height="([0-9.]+)")re");
  std::vector<double> heights;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator(); ++it)
    heights.push_back(std::stod((*it)[1]));
  REQUIRE(heights.size() >= 2);
  const double a = heights[heights.size() - 2], c = heights.back();
  CHECK(c == Approx(4 * a).epsilon(0.05));  // 1.0 is four times 0.25
}

TEST_CASE("a heatmap: a cell per row and column, shaded by value, the same grid as text", "[report][plots]") {
  const std::vector<float> values = {0.0f, 1.0f, 0.5f, 0.5f, 1.0f, 0.0f};  // 2 rows x 3 columns
  const std::string svg = report::svg_heatmap("alignment", {"x", "y"}, {"a", "b", "c"}, values);
  const std::regex cell("<rect[^>]*fill=");
  const auto cells = std::distance(std::sregex_iterator(svg.begin(), svg.end(), cell), std::sregex_iterator());
  CHECK(cells >= 6);
  const std::string text = report::text_heatmap({"x", "y"}, {"a", "b", "c"}, values);
  CHECK(std::count(text.begin(), text.end(), '\n') >= 2);          // a header and a line per row
  CHECK_THAT(text, Catch::Contains("x") && Catch::Contains("@"));  // 1.0 is the darkest shade
}

TEST_CASE("pages, escaping and visible characters", "[report][plots]") {
  CHECK(report::xml_escape("<a href=\"x\">&</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
  CHECK(report::visible(" ") == "␣");
  CHECK(report::visible("\t") == "?");
  CHECK(report::visible("é") == "é");
  const std::string page = report::html_page("A <title>", "<p>body</p>");
  CHECK_THAT(page, Catch::StartsWith("<!DOCTYPE html>") && Catch::Contains("A &lt;title&gt;") && Catch::Contains("<p>body</p>"));
}
