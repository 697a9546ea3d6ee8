// The generators of seeds 001 and 002 (attn datagen features|dates), read back as the tables the
// models train on.
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "attn/data/synthetic.h"
#include "attn/data/tables.h"
#include "data/synthetic_formats.h"  // (the data layer's own: date_format_names)
#include "data_test_util.h"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("feature corpus: header, determinism, the informative features carry the label", "[data][synthetic]") {
  data::FeatureCorpusOptions o;
  o.rows = 4000;
  o.dims = 5;
  o.informative = {1, 3};
  std::ostringstream a, b;
  data::write_feature_corpus(a, o);
  data::write_feature_corpus(b, o);
  CHECK(a.str() == b.str());
  const std::string path = data_test::temp_csv("synthetic", "features", a.str());
  const auto t = data::read_feature_csv(path, {}, "label");
  fs::remove(path);
  CHECK(t.feature_names == std::vector<std::string>{"x0", "x1", "x2", "x3", "x4"});
  // Mean of each feature by class: informative ones differ by 2s (s = Phi^-1(0.92) / sqrt(2) = 0.99).
  for (std::size_t f = 0; f < 5; ++f) {
    double sum[2] = {0, 0}, n[2] = {0, 0};
    for (std::int64_t r = 0; r < t.rows; ++r) {
      const int y = static_cast<int>(t.labels[static_cast<std::size_t>(r)]);
      sum[y] += t.values[static_cast<std::size_t>(r) * 5 + f];
      n[y] += 1;
    }
    const double gap = sum[1] / n[1] - sum[0] / n[0];
    INFO("feature " << f);
    if (f == 1 || f == 3)
      CHECK(gap == Approx(1.987).margin(0.1));
    else
      CHECK(std::abs(gap) < 0.1);
  }
  o.informative = {5};
  CHECK_THROWS_WITH(data::write_feature_corpus(a, o), Catch::Contains("not in 0..4"));
}

TEST_CASE("date corpus: every row's ISO date is the human one, in several formats and cases", "[data][synthetic]") {
  data::DateCorpusOptions o;
  o.rows = 3000;
  std::ostringstream out;
  data::write_date_corpus(out, o);
  const std::string path = data_test::temp_csv("synthetic", "dates", out.str());
  const auto t = data::read_pair_csv(path, "human", "machine");
  fs::remove(path);
  REQUIRE(t.sources.size() == 3000);
  const std::regex iso(R"((\d{4})-(\d\d)-(\d\d))"), dotted(R"((\d\d)\.(\d\d)\.(\d\d))"), slashed(R"((\d+)/(\d+)/(\d\d))");
  const char* months[] = {"january", "february", "march",     "april",   "may",      "june",
                          "july",    "august",   "september", "october", "november", "december"};
  int checked = 0, upper = 0, lower = 0;
  for (std::size_t i = 0; i < t.sources.size(); ++i) {
    std::smatch m, h;
    REQUIRE(std::regex_match(t.targets[i], m, iso));
    const int year = std::stoi(m[1]), month = std::stoi(m[2]), day = std::stoi(m[3]);
    CHECK((year >= 1950 && year <= 2049));
    std::string lowered;
    for (char c : t.sources[i]) lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    upper += t.sources[i] ==
                     [&] {
                       std::string u;
                       for (char c : t.sources[i]) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                       return u;
                     }()
                 ? 1
                 : 0;
    lower += t.sources[i] == lowered ? 1 : 0;
    if (std::regex_match(t.sources[i], h, dotted)) {  // dd.MM.yy
      CHECK(std::stoi(h[1]) == day);
      CHECK(std::stoi(h[2]) == month);
      CHECK(std::stoi(h[3]) == year % 100);
      ++checked;
    } else if (std::regex_match(t.sources[i], h, slashed)) {  // en_US short: M/d/yy
      CHECK(std::stoi(h[1]) == month);
      CHECK(std::stoi(h[2]) == day);
      ++checked;
    } else if (lowered.find(months[month - 1]) != std::string::npos) {  // the month's full name
      CHECK(lowered.find(std::to_string(year)) != std::string::npos);
      ++checked;
    }
  }
  CHECK(checked > 1000);
  CHECK(upper > 500);
  CHECK(lower > 500);
  o.locales = {"xx_YY"};
  CHECK_THROWS_WITH(data::write_date_corpus(out, o), Catch::Contains("xx_YY"));
  CHECK(data::date_format_names().size() == 14);
}

TEST_CASE("generate: a generator by name gives its bytes, bad kinds and values named", "[data][synthetic]") {
  data::GenerateRequest r;
  r.kind = "features";
  r.rows = 50;
  r.dims = 4;
  r.informative = "0,3";
  data::FeatureCorpusOptions o;
  o.rows = 50;
  o.dims = 4;
  o.informative = {0, 3};
  std::ostringstream direct;
  data::write_feature_corpus(direct, o);
  CHECK(data::generate(r) == direct.str());
  r.informative = "1,x";
  CHECK_THROWS_WITH(data::generate(r), Catch::Contains("--informative: 'x'"));
  r.kind = "weather";
  CHECK_THROWS_WITH(data::generate(r), Catch::Contains("unknown data set kind 'weather'") && Catch::Contains("dates"));
  r.kind = "features";
  r.rows = 0;
  CHECK_THROWS_WITH(data::generate(r), Catch::Contains("--rows must be >= 1"));
}
