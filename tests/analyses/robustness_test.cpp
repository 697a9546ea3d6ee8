// attn robustness through the tasks layer: no change at rate 0, the same figures every run, the
// words changed counted once per row, the inputs it refuses; the salient words against deleting each
// word, and the words each --targets rewrites.
#include "attn/analyses/robustness.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "../tasks/tasks_test_util.h"
#include "attn/io/atomic_file.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("robustness: rate 0 changes nothing, the same seed, the same figures, words counted once", "[tasks][robustness]") {
  const auto dir = scratch("robustness");
  const auto rows = class_rows(90);
  const std::string csv = class_model(dir, 90, 12);
  analyses::RobustnessRequest r;
  r.model = (dir / "run").string();
  r.csv = csv;
  r.rates = {0};
  r.json = (dir / "zero.json").string();
  analyses::robustness(r);
  const auto zero = nlohmann::json::parse(io::read_file(r.json));
  REQUIRE(zero.at("perturbations").size() == 12);
  for (const auto& p : zero.at("perturbations")) {
    INFO(p.at("name"));
    CHECK(p.at("words_changed") == 0);
    CHECK(p.at("flipped") == 0.0);
    CHECK(p.at("drop").at("macro_f1") == 0.0);
    CHECK(p.at("drop").at("ovo_auc") == 0.0);
  }
  r.rates = {1};
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
  r.rates = {0.3, 1.5};
  CHECK_THROWS_WITH(analyses::robustness(r), Catch::Contains("--rates: each must be in [0, 1]"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("salient words: leave-one-out's ranking is the one that deleting each word gives", "[tasks][robustness]") {
  const auto dir = scratch("robustness_salient");
  class_model(dir, 90, 12);
  const auto model = tasks::open_model((dir / "run").string());
  tasks::TextClassifierModel& classifier = *model->text_classifier();
  const std::map<std::int64_t, std::string> texts = {
      {1, "thanks good edit vermin"}, {2, "source talk page stupid fine"}, {5, "idiot thanks see subhuman"}};
  const auto ranked = analyses::salient_words(*model, texts, models::Method::kLeaveOneOut, 8);
  REQUIRE(ranked.size() == 3);
  for (const auto& [row, text] : texts) {
    INFO(text);
    const std::vector<float> p = classifier.text_probabilities({text}, 8);
    const std::size_t decision = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
    // Brute force: each word of 4+ letters deleted, the decision's probability lost.
    std::vector<std::pair<double, std::string>> lost;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
      if (w.size() < 4) continue;
      std::string without;
      std::istringstream again(text);
      for (std::string o; again >> o;)
        if (o != w) without += (without.empty() ? "" : " ") + o;
      lost.emplace_back(p[decision] - classifier.text_probabilities({without}, 8)[decision], w);
    }
    std::sort(lost.begin(), lost.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    REQUIRE(ranked.at(row).size() == lost.size());
    CHECK(ranked.at(row).front() == lost.front().second);
    CHECK(ranked.at(row).back() == lost.back().second);
  }
  CHECK(ranked.at(5) != std::vector<std::string>{});  // "see" (3 letters) is no target
  CHECK(std::find(ranked.at(5).begin(), ranked.at(5).end(), "see") == ranked.at(5).end());
  std::filesystem::remove_all(dir);
}

TEST_CASE("--targets salient spends the rate on each row's top words; --targets marked on the marked ones", "[tasks][robustness]") {
  const auto dir = scratch("robustness_targets");
  analyses::RobustnessRequest r;
  r.csv = class_model(dir, 90, 12);
  r.model = (dir / "run").string();
  r.perturbations = {text::Perturbation::kSpaced};
  r.targets = analyses::Targets::kSalient;
  r.rates = {0.2, 1.0};
  r.json = (dir / "salient.json").string();
  analyses::robustness(r);
  const auto salient = nlohmann::json::parse(io::read_file(r.json));
  REQUIRE(salient.at("perturbations").size() == 2);
  CHECK(salient.at("target") == "salient");
  // class_rows(90): rows of 3 to 7 nice words (one of 3 letters, "see") and a planted word on two rows in three.
  std::int64_t top = 0, all = 0;
  for (const std::string& row : class_rows(90)) {
    const std::string text = row.substr(row.find(',') + 1, row.rfind(',') - row.find(',') - 1);
    std::set<std::string> distinct;
    std::istringstream words(text);
    for (std::string w; words >> w;)
      if (w.size() >= 4) distinct.insert(w);
    top += static_cast<std::int64_t>(std::ceil(0.2 * static_cast<double>(distinct.size()) - 1e-9)) > 0;
    std::istringstream again(text);
    for (std::string w; again >> w;) all += w.size() >= 4;
  }
  const auto& at_20 = salient.at("perturbations")[0];
  CHECK(at_20.at("rate") == 0.2);
  CHECK(at_20.at("words_changed").get<std::int64_t>() >= top);  // one word each at least (repeated words: each time)
  CHECK(at_20.at("words_changed").get<std::int64_t>() < all);
  CHECK(salient.at("perturbations")[1].at("words_changed") == all);  // rate 1: every word the model reads
  // Marked: a Toxic Spans file marking the planted word of two rows; the others are not touched.
  const std::string spans = write_csv(dir / "spans.csv", "spans,text",
                                      {"\"[15, 16, 17, 18, 19, 20]\",thanks good see vermin", "\"[0, 1, 2, 3, 4, 5]\",stupid page talk"});
  r.targets = analyses::Targets::kMarked;
  r.rationales = spans;
  r.rates = {1.0};
  r.csv = write_csv(dir / "few.csv", "post_id,text,label",
                    {"a,thanks good see vermin,hatespeech", "b,stupid page talk,offensive", "c,fine edit source,normal"});
  r.json = (dir / "marked.json").string();
  analyses::robustness(r);
  const auto marked = nlohmann::json::parse(io::read_file(r.json));
  CHECK(marked.at("perturbations")[0].at("target_words") == 2);
  CHECK(marked.at("perturbations")[0].at("words_changed") == 2);
  r.rationales = write_csv(dir / "other.csv", "spans,text", {"\"[0, 1]\",nothing here matches"});
  CHECK_THROWS_WITH(analyses::robustness(r), Catch::Contains("other.csv: none of its texts is a text of"));
  r.targets = analyses::Targets::kGlobal;
  CHECK_THROWS_WITH(analyses::robustness(r), Catch::Contains("--rationales applies with --targets marked"));
  std::filesystem::remove_all(dir);
}
