// attn audit through the tasks layer: its figures against the model's own predictions of the same
// texts (templates and swaps), what the swaps count, the toxicity a --benign class gives, and the
// inputs it refuses.
#include "attn/analyses/audit.h"

#include "../tasks/tasks_test_util.h"
#include "attn/io/atomic_file.h"
#include "attn/metrics/bias.h"
#include "attn/text/identity_terms.h"

using namespace attn;
using namespace tasks_test;

namespace {

/// The model's probability of `label` for each text.
std::vector<double> scored(tasks::TrainedModel& model, const std::vector<std::string>& texts, const std::string& label) {
  std::vector<tasks::Input> inputs;
  for (const std::string& t : texts) inputs.push_back({t, {}});
  std::vector<double> out;
  for (const auto& p : model.predict(inputs, 7)) out.push_back(p.at("probabilities").at(label).get<double>());
  return out;
}

}  // namespace

TEST_CASE("audit: templates and swaps are the model's predictions of those texts, counted by hand", "[tasks][audit]") {
  const auto dir = scratch("audit");
  // Rows naming the terms (one names two of them, one none) among the words the model knows.
  const std::vector<std::string> rows = {"c1,thanks muslim good,1,0", "c2,\"Muslims, see the page\",0,0",    "c3,christian idiot,1,1",
                                         "c4,fine talk,0,0",          "c5,muslim and christian friends,0,0", "c6,stupid jewish page,1,0"};
  const std::string csv = write_csv(dir / "rows.csv", "id,comment_text,bad,rude", rows);
  saved_model("bilstm-attention", dir / "run", {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "10"}},
              {{"embed_dim", 8}, {"lstm_units", 4}});
  const std::string terms = (dir / "terms.txt").string();
  io::write_file_atomic(terms, "muslim\nchristian\njewish\n");
  analyses::AuditRequest r;
  r.model = (dir / "run").string();
  r.terms_file = terms;
  r.options.set("csv", csv, data::Inputs::Origin::kGiven);
  r.steps = 4;
  r.examples = 3;
  r.json = (dir / "audit.json").string();
  r.html = (dir / "audit.html").string();
  const std::string table = analyses::audit(r);
  CHECK_THAT(table, Catch::Contains("toxicity = p(bad)") && Catch::Contains("muslim") && Catch::Contains("jewish"));
  const auto report = nlohmann::json::parse(io::read_file(r.json));
  CHECK_THAT(io::read_file(r.html), Catch::Contains("background:rgb(") && Catch::Contains("christian"));
  const std::vector<std::string> names = {"muslim", "christian", "jewish"};
  REQUIRE(report.at("terms").size() == 3);

  const auto model = tasks::open_model(r.model);
  // Templates: each term's kind sentences' mean toxicity, and the AUCs with a term's sentences as its subgroup.
  std::vector<std::string> texts;
  std::vector<std::uint8_t> toxic;
  std::vector<std::vector<float>> member(3);
  for (std::size_t i = 0; i < 3; ++i)
    for (const auto& s : text::template_sentences(names[i])) {
      texts.push_back(s.text);
      toxic.push_back(s.toxic);
      for (std::size_t k = 0; k < 3; ++k) member[k].push_back(k == i ? 1.0f : 0.0f);
    }
  const std::vector<double> p = scored(*model, texts, "bad");
  const metrics::BiasFigures expected = metrics::bias_figures(std::vector<float>(p.begin(), p.end()), toxic, names, member);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO(names[i]);
    const auto& t = report.at("terms")[i];
    CHECK(t.at("term") == names[i]);
    double kind = 0;
    for (std::size_t s = i * 112; s < (i + 1) * 112; ++s) kind += toxic[s] ? 0 : p[s] / 56;
    CHECK(t.at("templates").at("kind_mean").get<double>() == Approx(kind).epsilon(1e-5));
    CHECK(t.at("templates").at("bpsn_auc").get<double>() == Approx(*expected.identities[i].bpsn_auc));
    CHECK(t.at("templates").at("bnsp_auc").get<double>() == Approx(*expected.identities[i].bnsp_auc));
    CHECK(t.at("why").at("sentences") == 56);  // every term is in the model's vocabulary
  }
  CHECK(report.at("templates").at("final").get<double>() == Approx(*expected.final_metric));
  // Each filler word's mean toxicity over the terms' sentences, in the templates' order (its first
  // appearance): "stupid" first, then its kind counterpart "kind".
  std::map<std::string, std::pair<double, int>> by_filler;
  std::vector<std::string> filler_order;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto sentences = text::template_sentences(names[i]);
    for (std::size_t k = 0; k < sentences.size(); ++k) {
      auto& [sum, n] = by_filler[sentences[k].filler];
      if (n == 0 && i == 0) filler_order.push_back(sentences[k].filler);
      sum += p[i * sentences.size() + k], ++n;
    }
  }
  const auto& fillers = report.at("templates").at("fillers");
  REQUIRE(fillers.size() == 24);
  REQUIRE(filler_order.size() == 24);
  CHECK(fillers[0].at("word") == "stupid");
  CHECK(fillers[0].at("toxic") == true);
  CHECK(fillers[1].at("word") == "kind");
  for (std::size_t f = 0; f < fillers.size(); ++f) {
    INFO(filler_order[f]);
    CHECK(fillers[f].at("word") == filler_order[f]);
    const auto [sum, n] = by_filler.at(filler_order[f]);
    CHECK(n == (f < 16 ? 18 : 6));  // an adjective in 6 frames, a verb in 2, for each of 3 terms
    CHECK(fillers[f].at("mean").get<double>() == Approx(sum / n).epsilon(1e-5));
  }

  // Swaps: rows c1, c2 and c5 name muslim, c3 and c5 christian, c6 jewish; each mention -> 2 other terms.
  const auto& swaps = report.at("swaps");
  CHECK(swaps.at("rows") == 6);
  CHECK(swaps.at("rows_mentioning") == 5);
  CHECK(swaps.at("texts_scored") == (3 + 2 + 1) * 2);
  CHECK(report.at("terms")[0].at("swaps").at("rows_mentioning") == 3);
  CHECK(report.at("terms")[1].at("swaps").at("rows_mentioning") == 2);
  // "jewish" put in: into c1, c2, c5 (for muslim) and c3, c5 (for christian); the mean shift by hand.
  const std::vector<std::string> originals = {"thanks muslim good", "Muslims, see the page", "christian idiot",
                                              "muslim and christian friends"};
  const std::vector<std::string> swapped = {"thanks jewish good", "Jewishs, see the page", "jewish idiot", "jewish and christian friends",
                                            "muslim and jewish friends"};
  const std::vector<double> before = scored(*model, originals, "bad"), after = scored(*model, swapped, "bad");
  const double shift =
      (after[0] - before[0] + after[1] - before[1] + after[2] - before[2] + after[3] - before[3] + after[4] - before[3]) / 5;
  const auto& jewish = report.at("terms")[2].at("swaps");
  CHECK(jewish.at("swapped_in") == 5);
  // A mean of differences of float probabilities (~1e-3 here) scored in other batches than the
  // audit's: equal to float rounding (an AVX2 host differed by 1.2e-8, 1.3e-5 of the shift).
  CHECK(jewish.at("mean_shift").get<double>() == Approx(shift).margin(1e-6));
  CHECK(swaps.at("flipped").size() <= 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("audit: a benign class's complement is the toxicity, and what it refuses", "[tasks][audit]") {
  const auto dir = scratch("audit_benign");
  const std::string csv = class_model(dir, 30, 10);
  analyses::AuditRequest r;
  r.model = (dir / "run").string();
  r.benign = "normal";
  r.why = false;
  r.json = (dir / "a.json").string();
  const std::string table = analyses::audit(r);
  CHECK_THAT(table, Catch::Contains("toxicity = 1 - p(normal)"));
  const auto report = nlohmann::json::parse(io::read_file(r.json));
  REQUIRE(report.at("terms").size() == text::builtin_identity_terms().size());
  CHECK_FALSE(report.contains("swaps"));  // no --csv: templates only
  CHECK(report.at("why").contains("skipped"));
  // The first term's kind sentences: 1 - p(normal), by hand.
  const auto model = tasks::open_model(r.model);
  std::vector<std::string> kind;
  for (const auto& s : text::template_sentences(text::builtin_identity_terms()[0]))
    if (!s.toxic) kind.push_back(s.text);
  double mean = 0;
  for (double p : scored(*model, kind, "normal")) mean += (1 - p) / static_cast<double>(kind.size());
  CHECK(report.at("terms")[0].at("templates").at("kind_mean").get<double>() == Approx(mean).epsilon(1e-5));

  r.benign = "neutral";
  CHECK_THROWS_WITH(analyses::audit(r), Catch::Contains("--benign") && Catch::Contains("'neutral'") && Catch::Contains("hatespeech"));
  r.benign = "normal";
  r.label = "offensive";
  CHECK_THROWS_WITH(analyses::audit(r), Catch::Contains("give one"));
  r.benign.clear();
  r.terms_file = (dir / "missing.txt").string();
  CHECK_THROWS_WITH(analyses::audit(r), Catch::Contains("missing.txt"));
  r.terms_file.clear();
  r.why = true;
  r.steps = 0;
  CHECK_THROWS_WITH(analyses::audit(r), Catch::Contains("--steps"));
  std::filesystem::remove_all(dir);
}
