// attn robustness through the tasks layer: no change at rate 0, the same figures every run, the
// words changed counted once per row, and the inputs it refuses.
#include "attn/analyses/robustness.h"

#include "../tasks/tasks_test_util.h"
#include "attn/io/atomic_file.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("robustness: rate 0 changes nothing, the same seed, the same figures, words counted once", "[tasks][robustness]") {
  const auto dir = scratch("robustness");
  const auto rows = class_rows(90);
  const std::string csv = write_csv(dir / "posts.csv", "post_id,text,label", rows);
  saved_model("bilstm-attention", dir / "run",
              {{"csv", csv}, {"text-column", "text"}, {"id-column", "post_id"}, {"label-column", "label"}, {"maxlen", "12"}},
              {{"embed_dim", 8}, {"lstm_units", 4}});
  analyses::RobustnessRequest r;
  r.model = (dir / "run").string();
  r.csv = csv;
  r.rate = 0;
  r.json = (dir / "zero.json").string();
  analyses::robustness(r);
  const auto zero = nlohmann::json::parse(io::read_file(r.json));
  REQUIRE(zero.at("perturbations").size() == 6);
  for (const auto& p : zero.at("perturbations")) {
    INFO(p.at("name"));
    CHECK(p.at("words_changed") == 0);
    CHECK(p.at("flipped") == 0.0);
    CHECK(p.at("drop").at("macro_f1") == 0.0);
    CHECK(p.at("drop").at("ovo_auc") == 0.0);
  }
  r.rate = 1;
  r.perturbations = {text::Perturbation::kMask, text::Perturbation::kSpace};
  r.json = (dir / "a.json").string();
  const std::string table = analyses::robustness(r);
  CHECK_THAT(table, Catch::Contains("mask") && Catch::Contains("flipped"));
  r.json = (dir / "b.json").string();
  analyses::robustness(r);
  CHECK(io::read_file((dir / "a.json").string()) == io::read_file((dir / "b.json").string()));  // deterministic
  const auto all = nlohmann::json::parse(io::read_file(r.json));
  // Every word of 4 or more letters, once per row (a hierarchical model reads a text twice; counted once).
  std::int64_t words = 0;
  for (const auto& row : rows) {
    const std::string text = row.substr(row.find(',') + 1, row.rfind(',') - row.find(',') - 1);
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find(' ', start), text.size());
      words += end - start >= 4;
      start = end + 1;
    }
  }
  CHECK(all.at("perturbations")[0].at("target_words") == words);
  CHECK(all.at("perturbations")[0].at("words_changed") == words);
  // Refused: an unlabelled file, a bad rate.
  r.csv = write_csv(dir / "unlabelled.csv", "post_id,text", {"q1,thanks good"});
  CHECK_THROWS_WITH(analyses::robustness(r), Catch::Contains("needs labelled rows"));
  r.rate = 1.5;
  CHECK_THROWS_WITH(analyses::robustness(r), Catch::Contains("--rate must be in [0, 1]"));
  std::filesystem::remove_all(dir);
}
