// Model config overrides as users give them: --set key=value, and a JSON file under them.
#include <fstream>

#include "attn/models/overrides.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("parse_assignment: --set's value as JSON when it parses, else a string; no key refused", "[models][overrides]") {
  CHECK(models::parse_assignment("spatial_dropout=0.2") == nlohmann::json{{"spatial_dropout", 0.2}});
  CHECK(models::parse_assignment("score=general") == nlohmann::json{{"score", "general"}});
  CHECK_THROWS_AS(models::parse_assignment("novalue"), std::invalid_argument);
  CHECK(models::parse_assignment("hidden=[8, 4]") == nlohmann::json{{"hidden", {8, 4}}});
  CHECK_THROWS_WITH(models::parse_assignment("=3"), "--set: expected key=value, got '=3'");
}

TEST_CASE("read_overrides: a JSON file, then --set on top, errors name the file", "[models][overrides]") {
  const auto dir = scratch("overrides");
  const std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  std::ofstream(good) << R"({"lstm_units": 30, "embed_dim": 16})";
  std::ofstream(bad) << "{lstm";
  std::ofstream(dir / "list.json") << "[1, 2]";
  CHECK(models::read_overrides(good, {"lstm_units=8"}) == nlohmann::json{{"lstm_units", 8}, {"embed_dim", 16}});
  CHECK_THROWS_WITH(models::read_overrides(bad, {}), Catch::Contains("bad.json: not valid JSON"));
  CHECK_THROWS_WITH(models::read_overrides((dir / "none.json").string(), {}), Catch::Contains("none.json"));
  CHECK_THROWS_WITH(models::read_overrides((dir / "list.json").string(), {}), Catch::Contains("list.json: expected a JSON object"));
  std::filesystem::remove_all(dir);
}
