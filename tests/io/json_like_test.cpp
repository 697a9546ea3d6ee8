// Typed structs read from JSON a user may have edited: a value of another kind is an error naming
// its key, never a conversion.
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/io/json_like.h"

using namespace attn;
using nlohmann::json;

namespace {
struct Inner {
  double rate = 0.5;
  std::vector<std::string> names = {"first"};
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Inner, rate, names)
struct Outer {
  int epochs = 3;
  std::string name = "run";
  bool flag = false;
  Inner inner;
  json anything;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Outer, epochs, name, flag, inner, anything)
}  // namespace

TEST_CASE("get_like reads values of the struct's kinds and names the key of any other", "[io]") {
  const Outer o =
      io::get_like<Outer>(json::parse(R"({"epochs": 7, "inner": {"rate": 2, "names": ["a"]}, "anything": [1, "x"], "extra": 1})"));
  CHECK(o.epochs == 7);
  CHECK(o.inner.rate == 2.0);  // an integer where a number is expected is a number
  CHECK(o.inner.names == std::vector<std::string>{"a"});
  CHECK(o.name == "run");  // missing keys keep their defaults
  CHECK_THROWS_WITH(io::get_like<Outer>(json::parse(R"({"epochs": 1e49})")), "\"epochs\" must be an integer, got 1e+49");
  CHECK_THROWS_WITH(io::get_like<Outer>(json::parse(R"({"epochs": 2.5})")), "\"epochs\" must be an integer, got 2.5");
  CHECK_THROWS_WITH(io::get_like<Outer>(json::parse(R"({"inner": {"rate": "fast"}})")), "\"inner.rate\" must be a number, got \"fast\"");
  CHECK_THROWS_WITH(io::get_like<Outer>(json::parse(R"({"inner": {"names": ["a", 3]}})")), "\"inner.names[1]\" must be a string, got 3");
  CHECK_THROWS_WITH(io::get_like<Outer>(json::parse(R"({"flag": 1})")), "\"flag\" must be true or false, got 1");
  CHECK_THROWS_WITH(io::get_like<Outer>(json::parse(R"([1])")), "the document must be an object, got [1]");
  CHECK_THROWS_AS(io::get_like<Outer>(json::parse(R"({"inner": 5})")), std::invalid_argument);
}
