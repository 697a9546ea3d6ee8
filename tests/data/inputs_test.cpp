// Command-line inputs as data: merging declarations, parsing values, typed tables of fields and rules, inputs that do not apply.
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

namespace {
struct Settings {
  data::Given<std::string> name;
  data::Given<std::int64_t> count;
  data::Given<double> rate;
  data::Given<bool> fast;
  data::Given<std::vector<std::string>> columns;
};
const std::vector<data::Field<Settings>> kSettings = {
    {{"name", "a name", "anon"}, &Settings::name},   {{"count", "a count", "3"}, &Settings::count},
    {{"rate", "a rate", ""}, &Settings::rate},       {{"fast", "a flag", "", data::InputSpec::Kind::kFlag}, &Settings::fast},
    {{"columns", "a list", ""}, &Settings::columns},
};
}  // namespace

TEST_CASE("read_fields: a table of typed fields, declared and read in one place", "[data][inputs]") {
  const auto specs = data::specs_of(kSettings);
  REQUIRE(specs.size() == 5);
  CHECK(specs[3].kind == data::InputSpec::Kind::kFlag);
  // Given values parsed as their member's type; defaults filled but not marked given; no value: kept.
  Settings s = data::read_fields(given({{"count", "12"}, {"fast", ""}, {"columns", "a,b"}}, specs), kSettings);
  CHECK(s.name.value == "anon");
  CHECK_FALSE(s.name.given);
  CHECK(s.count.value == 12);
  CHECK(s.count.given);
  CHECK(s.count.text == "12");
  CHECK_FALSE(s.rate.given);
  CHECK(s.rate.value == 0);
  CHECK(s.fast.value);
  CHECK(s.columns.value == std::vector<std::string>{"a", "b"});
  Settings start;
  start.rate.value = 0.5;  // what the struct held stays when the input has no value
  CHECK(data::read_fields(given({}, specs), kSettings, start).rate.value == 0.5);
  // Bad values: the flag's name in the error.
  CHECK_THROWS_WITH(data::read_fields(given({{"count", "x"}}, specs), kSettings), "--count: 'x' is not an integer");
  CHECK_THROWS_WITH(data::read_fields(given({{"rate", "nan"}}, specs), kSettings), "--rate: 'nan' is not a number");
}

TEST_CASE("check_rules: the first broken rule between given inputs is the error", "[data][inputs]") {
  using R = data::InputRule;
  const std::vector<R> rules = {{R::Kind::kAppliesWith, "docs", "rationales", ""},
                                {R::Kind::kOneOf, "csv", "data", ""},
                                {R::Kind::kNotWith, "weights", "data", "reads the CSV: give --csv"}};
  CHECK_NOTHROW(data::check_rules(given({{"docs", "d"}, {"rationales", "r"}, {"csv", "c"}, {"weights", "w"}}, {}), rules));
  CHECK_THROWS_WITH(data::check_rules(given({{"docs", "d"}}, {}), rules), "--docs applies with --rationales");
  CHECK_THROWS_WITH(data::check_rules(given({{"csv", "c"}, {"data", "d"}}, {}), rules), "give one of --csv and --data");
  CHECK_THROWS_WITH(data::check_rules(given({{"weights", "w"}, {"data", "d"}}, {}), rules), "--weights reads the CSV: give --csv");
  // Defaults are no request: a rule looks at what was given.
  CHECK_NOTHROW(data::check_rules(given({{"data", "d"}}, {{"csv", "", "x.csv"}, {"docs", "", "docs.jsonl"}}), rules));
  // Rules apply in order.
  CHECK_THROWS_WITH(data::check_rules(given({{"docs", "d"}, {"csv", "c"}, {"data", "d"}}, {}), rules), Catch::Contains("--docs"));
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
