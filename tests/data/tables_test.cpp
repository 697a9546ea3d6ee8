// The CSVs of the non-text models.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/data/tables.h"
#include "attn/text/csv.h"
#include "data_test_util.h"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("read_feature_csv: all non-label columns or the chosen ones, errors name line and column", "[data][tables]") {
  const std::string path = data_test::temp_csv("tables", "ok", "id,a,b,label,c\nr1,1.5,-2,1,3e-1\nr2, 0 ,4,0,5\n");
  const data::FeatureTable t = data::read_feature_csv(path, {}, "label");
  CHECK(t.feature_names == std::vector<std::string>{"a", "b", "c"});
  CHECK(t.rows == 2);
  CHECK(t.values == std::vector<float>{1.5f, -2.0f, 0.3f, 0.0f, 4.0f, 5.0f});
  CHECK(t.labels == std::vector<float>{1.0f, 0.0f});
  const data::FeatureTable chosen = data::read_feature_csv(path, {"c", "a"}, "label");
  CHECK(chosen.values == std::vector<float>{0.3f, 1.5f, 5.0f, 0.0f});

  const std::string bad = data_test::temp_csv("tables", "bad", "a,b,label\n1,2,1\n3,x7,0\n");
  CHECK_THROWS_WITH(data::read_feature_csv(bad, {}, "label"), Catch::Contains(bad + ":3: column 2 (b)") && Catch::Contains("'x7'"));
  const std::string label = data_test::temp_csv("tables", "label", "a,label\n1,2\n");
  CHECK_THROWS_WITH(data::read_feature_csv(label, {}, "label"), Catch::Contains(":2: column 2 (label): label must be 0 or 1"));
  CHECK_THROWS_WITH(data::read_feature_csv(path, {}, "target"), Catch::Contains("target"));
  CHECK_THROWS_WITH(data::read_feature_csv(path, {"zz"}, "label"), Catch::Contains("zz"));
  const std::string nan = data_test::temp_csv("tables", "nan", "a,label\nnan,1\n");
  CHECK_THROWS_WITH(data::read_feature_csv(nan, {}, "label"), Catch::Contains("finite number"));
  for (const auto& p : {path, bad, label, nan}) fs::remove(p);
}

TEST_CASE("read_pair_csv: source and target columns, target optional", "[data][tables]") {
  const std::string path = data_test::temp_csv("tables", "pairs", "human,machine\n\"may 9, 1998\",1998-05-09\n");
  const auto t = data::read_pair_csv(path, "human", "machine");
  CHECK(t.sources == std::vector<std::string>{"may 9, 1998"});
  CHECK(t.targets == std::vector<std::string>{"1998-05-09"});
  CHECK(data::read_pair_csv(path, "human", "iso", true).targets.empty());
  CHECK_THROWS_WITH(data::read_pair_csv(path, "human", "iso"), Catch::Contains("iso") && Catch::Contains("machine"));
  fs::remove(path);
}
