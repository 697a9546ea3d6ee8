// Command-line inputs as data: merging declarations, parsing values, inputs that do not apply.
#include <catch2/catch.hpp>

#include "attn/data/inputs.h"
#include "attn/data/prepare.h"
#include "data_test_util.h"

using namespace attn;
using data_test::given;

TEST_CASE("merge_inputs keeps each name once, the first declaration winning", "[data][inputs]") {
  const auto merged = data::merge_inputs({{{"csv", "first", ""}, {"a", "", "1"}}, {{"csv", "second", ""}, {"b", "", ""}}});
  REQUIRE(merged.size() == 3);
  CHECK(merged[0].help == "first");
  CHECK(merged[2].name == "b");
}

TEST_CASE("Inputs: given vs defaulted, typed values, errors name the flag", "[data][inputs]") {
  const data::Inputs in = given({{"maxlen", "abc"}, {"labels", ""}, {"rows", "1,2"}}, {{"text-column", "", "comment_text"}});
  CHECK(in.given("maxlen"));
  CHECK_FALSE(in.given("text-column"));
  CHECK(in.text("text-column") == "comment_text");
  CHECK(in.list("labels").empty());
  CHECK(in.list("rows") == std::vector<std::string>{"1", "2"});
  CHECK_THROWS_AS(in.integer("maxlen"), std::invalid_argument);
  CHECK_THROWS_WITH(in.integer("maxlen"), Catch::Contains("--maxlen") && Catch::Contains("abc"));
  CHECK_THROWS_WITH(in.text("out"), "--out is required");
  CHECK_FALSE(in.get("out").has_value());
  CHECK(in.given_names() == std::vector<std::string>{"labels", "maxlen", "rows"});
  const data::Inputs numbers = given({{"weight", "0.25"}, {"bad", "1x"}, {"inf", "inf"}}, {});
  CHECK(numbers.number("weight") == 0.25);
  CHECK_THROWS_WITH(numbers.number("bad"), "--bad: '1x' is not a number");
  CHECK_THROWS_WITH(numbers.number("inf"), "--inf: 'inf' is not a number");
}

TEST_CASE("require_declared names the first given input that does not apply", "[data][inputs]") {
  const data::Inputs in = given({{"csv", "a.csv"}, {"feature-columns", "x0"}});
  CHECK_NOTHROW(data::require_declared(in, {{"csv", "", ""}, {"feature-columns", "", ""}}, "a feature model"));
  CHECK_THROWS_WITH(data::require_declared(in, {{"csv", "", ""}}, "bilstm-attention"),
                    "--feature-columns does not apply to bilstm-attention");
}

TEST_CASE("prepare inputs: Keras' defaults, validated settings, --tokenizer excludes tokenizer settings", "[data][prepare]") {
  const auto specs = data::prepare_inputs();
  const data::PrepareOptions o = data::prepare_options(given({{"csv", "train.csv"}}, specs), 2);
  CHECK(o.csv == "train.csv");
  CHECK(o.pad.maxlen == 200);
  CHECK(o.pad.padding == text::Side::kPre);
  CHECK(o.tokenizer.num_words == 20000);
  CHECK(o.columns.label_columns.size() == 6);
  CHECK_FALSE(o.columns.id_required);
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"padding", "middle"}}, specs), 1),
                    Catch::Contains("--padding must be 'pre' or 'post'"));
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"maxlen", "0"}}, specs), 1), Catch::Contains("--maxlen must be >= 1"));
  CHECK_THROWS_WITH(data::prepare_options(given({{"csv", "a"}, {"tokenizer", "t.json"}, {"num-words", "5"}}, specs), 1),
                    Catch::Contains("drop --num-words"));
  const data::PrepareOptions applied = data::prepare_options(given({{"csv", "a"}, {"tokenizer", "t.json"}}, specs), 1);
  CHECK(applied.apply_tokenizer == "t.json");
  CHECK(applied.columns.labels_optional);
  CHECK_THROWS_AS(data::prepare_options(given({}, specs), 1), std::invalid_argument);  // no --csv
}
