// Word importance over a corpus: the ranking, the halves' stability.
#include <catch2/catch.hpp>

#include "attn/analyses/aggregate.h"

#include <thread>

#include "../tasks/tasks_test_util.h"
#include "attn/io/atomic_file.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("aggregate: words ranked by mean score, counted, the rare left out, ties in byte order", "[tasks][aggregate]") {
  analyses::WordTotals t;
  for (double s : {0.9, 0.7}) t.add("idiot", s, 0);
  t.add("idiot", 0.8, 1);
  for (int i = 0; i < 3; ++i) t.add("the", 0.1, i % 2);
  t.add("rare", 5.0, 0);  // once: below --min-count 2
  for (const char* w : {"b", "a"}) t.add(w, 0.5, 0), t.add(w, 0.5, 1);
  const std::vector<analyses::WordFigure> r = t.ranked(2, 0);
  REQUIRE(r.size() == 4);
  CHECK(r[0].word == "idiot");
  CHECK(r[0].count == 3);
  CHECK(r[0].mean == Approx(0.8));
  CHECK(r[1].word == "a");  // a tie with "b": byte order
  CHECK(r[2].word == "b");
  CHECK(r[3].word == "the");
  CHECK(t.ranked(2, 2).size() == 2);
  CHECK(t.ranked(1, 1)[0].word == "rare");
  // Per half: "idiot" twice in the first, once in the second.
  CHECK(t.ranked(2, 0, 0)[0].mean == Approx(0.8));
  CHECK(t.ranked(1, 0, 1)[0].word == "idiot");
  CHECK(t.ranked(1, 0, 1).size() == 4);  // idiot, a, b and the once each in the second half
  CHECK(t.ranked(2, 0, 1).empty());
}

TEST_CASE("aggregate: stability is Kendall's tau-b of the halves' means over their top words' union", "[tasks][aggregate]") {
  analyses::WordTotals same, reversed;
  const std::vector<std::string> words = {"w1", "w2", "w3", "w4"};
  for (std::size_t i = 0; i < words.size(); ++i) {
    const double s = static_cast<double>(i);
    same.add(words[i], s, 0), same.add(words[i], s + 0.5, 1);
    reversed.add(words[i], s, 0), reversed.add(words[i], -s, 1);
  }
  CHECK(same.stability(1, 4).value() == Approx(1.0));
  CHECK(reversed.stability(1, 4).value() == Approx(-1.0));
  // Top 2 of each half: {w4, w3} and {w1, w2}; over the four, the halves disagree completely.
  CHECK(reversed.stability(1, 2).value() == Approx(-1.0));
  // A word only one half ranks takes the lowest place in the other: by hand, the union {a, b, c} with
  // first-half means (3, 2, -inf) and second-half (-inf, 2, 1): pairs ab and ac discordant, bc
  // concordant -> (1 - 2) / 3.
  analyses::WordTotals partial;
  partial.add("a", 3, 0), partial.add("b", 2, 0), partial.add("b", 2, 1), partial.add("c", 1, 1);
  CHECK(partial.stability(1, 2).value() == Approx(-1.0 / 3.0));
  analyses::WordTotals one;
  one.add("a", 1, 0);
  CHECK_FALSE(one.stability(1, 5).has_value());
}

TEST_CASE("aggregate: totals merge by adding, and cross JSON exactly", "[tasks][aggregate]") {
  analyses::WordTotals a, b;
  a.add("idiot", 0.1, 0), a.add("the", 1.0 / 3.0, 1);
  b.add("idiot", 0.2, 1), b.add("rare", 5.0, 0);
  a.merge(b);
  const auto r = a.ranked(1, 0);
  REQUIRE(r.size() == 3);
  CHECK(r[0].word == "rare");
  CHECK(r[1].word == "the");
  CHECK(r[2].count == 2);
  CHECK(r[2].mean == (0.1 + 0.2) / 2);
  const analyses::WordTotals back = analyses::WordTotals::from_json(nlohmann::json::parse(a.to_json().dump()));
  CHECK(back.to_json() == a.to_json());
  CHECK(back.ranked(1, 0, 1)[0].mean == 1.0 / 3.0);  // the double's every bit
}

TEST_CASE("aggregate: two workers sharing the chunks give the bytes one process gives", "[tasks][aggregate]") {
  const auto dir = scratch("aggregate_shared");
  const std::string csv = class_model(dir, 60, 10);
  const auto request = [&](const std::string& name) {
    analyses::AggregateRequest r;
    r.model = (dir / "run").string();
    r.options.set("csv", csv, data::Inputs::Origin::kGiven);
    r.options.set("text-column", "text", data::Inputs::Origin::kGiven);
    r.min_count = 1;
    r.chunk = 7;  // 9 chunks, the last short
    r.batch_size = 4;
    r.json = (dir / (name + ".json")).string();
    r.csv = (dir / (name + ".csv")).string();
    return r;
  };
  const std::string alone = analyses::aggregate(request("alone"));
  TwoThreads shared;
  std::string table[2];
  std::vector<std::thread> workers;
  for (int rank = 0; rank < 2; ++rank)
    workers.emplace_back([&, rank] {
      const ThreadSharing sharing(shared, rank);
      analyses::AggregateRequest r = request("shared" + std::to_string(rank));
      r.sharing = &sharing;
      table[rank] = analyses::aggregate(r);
    });
  for (auto& w : workers) w.join();
  CHECK(table[0] == alone);
  CHECK(table[1].empty());  // rank 0 reports and writes
  CHECK(io::read_file((dir / "shared0.json").string()) == io::read_file((dir / "alone.json").string()));
  CHECK(io::read_file((dir / "shared0.csv").string()) == io::read_file((dir / "alone.csv").string()));
  CHECK_FALSE(fs::exists(dir / "shared1.json"));
  CHECK(shared.jobs_taken[0] + shared.jobs_taken[1] == 9 + 2);  // each chunk once, and each worker's last ask finds none
  fs::remove_all(dir);
}
