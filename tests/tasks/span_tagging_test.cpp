// Span tagging: a token's target from the characters people marked in its word, the scoring path
// (the character F1 of what it marks), the learned threshold, explanations, and its inputs' misuse.
// (A planted word learned end to end, Python's torch.jit.load: tests/apps/spans_tagger_test.py.)
#include "attn/tasks/span_tagging.h"
#include "attn/metrics/spans.h"
#include "attn/models/kinds.h"
#include "attn/tasks/text_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

namespace {

/// Toxic Spans' layout: spans, text. Row 1 marks "idiot" (not its comma), row 3 nothing.
std::vector<std::string> span_rows() {
  return {"\"[0, 1, 2, 3, 4]\",\"idiot, you are\"", "\"[10, 11, 12, 13, 14]\",\"you are a idiot\"", "[],\"have a nice day\"",
          "\"[4, 5, 6, 7, 8, 9]\",\"so  stupid!! ok\""};
}

}  // namespace

TEST_CASE("span tagging: a token is marked when people marked a character of its word", "[tasks][spans]") {
  const fs::path dir = scratch("span_targets");
  const std::string csv = write_csv(dir / "tsd.csv", "spans,text", span_rows());
  const auto& entry = models::find_model("bilstm-tagger");
  const auto data = tasks::span_tagging().open(train_inputs(tasks::span_tagging(), {{"csv", csv}}), entry, (dir / "run").string(), 1);
  REQUIRE(data->rows() == 4);
  const tasks::Batch b = data->batch({0, 1, 2, 3}, tasks::Width::kData);
  REQUIRE(b.targets.size(0) == 4);
  const auto row = [&](int r) {
    std::vector<float> out;
    for (std::int64_t t = 0; t < data->lengths()[static_cast<std::size_t>(r)]; ++t) out.push_back(b.targets[r][t].item<float>());
    return out;
  };
  CHECK(row(0) == std::vector<float>{1, 0, 0});
  CHECK(row(1) == std::vector<float>{0, 0, 0, 1});
  CHECK(row(2) == std::vector<float>{0, 0, 0, 0});
  CHECK(row(3) == std::vector<float>{0, 1, 0});  // repeated spaces, "!!" filtered with its word
  CHECK(b.inputs.at(0).toTensor().dim() == 3);   // every token with its character n-grams
  const nlohmann::json config = data->data_config();
  CHECK(config.at("text_column") == "text");
  CHECK(config.at("maxlen") == 4);
  CHECK(data->logit_adjustment() == "span-f1");
  // The loss's weights {a marked token's, the soft F1's}. --pos-weight: auto, the unmarked tokens
  // per marked one (11 of 14 tokens unmarked, 3 marked); none: 1.
  const auto weights = [&](const tasks::LossWeights& spec) {
    const torch::Tensor w = data->loss_weights(spec, {0, 1, 2, 3});
    return std::vector<float>(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
  };
  CHECK(weights({"auto", ""})[0] == Approx(11.0 / 3.0));
  CHECK(weights({"3", "", 0.5}) == std::vector<float>{3.0f, 0.5f});
  CHECK(weights({"", ""}) == std::vector<float>{1.0f, 0.0f});
  CHECK_THROWS_WITH(data->loss_weights({"1,2", ""}, {0}), Catch::Contains("one positive number"));
  CHECK_THROWS_WITH(data->loss_weights({"", "balanced"}, {0}), Catch::Contains("--class-weight"));
  CHECK_THROWS_WITH(data->loss_weights({"", "", -1}, {0}), Catch::Contains("--span-f1-loss must be a number >= 0"));
  fs::remove_all(dir);
}

TEST_CASE("span tagging: evaluate scores what it marks by the character F1; the threshold learned", "[tasks][spans]") {
  const fs::path dir = scratch("span_evaluate");
  const std::string csv = write_csv(dir / "tsd.csv", "spans,text", span_rows());
  saved_model("bilstm-tagger", dir / "run", {{"csv", csv}}, {{"embed_dim", 8}, {"lstm_units", 4}});
  const auto model = tasks::open_for((dir / "run").string(), tasks::Command::kEvaluate, data::Inputs());
  REQUIRE(model->span_tagger() != nullptr);
  CHECK(model->text_classifier() == nullptr);
  const auto data = model->open_csv(csv, data::Inputs(), 1);
  const std::vector<std::int64_t> rows = tasks::all_rows(data->rows());
  const tasks::Evaluation e = data->evaluate(model->module(), rows, {8, tasks::EvaluateOptions::Detail::kFull});
  // The figures are the metric's over what the tagger marks at 0.5, as attn spans marks.
  std::vector<std::string> texts = {"idiot, you are", "you are a idiot", "have a nice day", "so  stupid!! ok"};
  const auto marked = model->span_tagger()->text_spans(texts, 8, 0.5);
  const metrics::SpanScores s = metrics::span_scores(marked, {{0, 1, 2, 3, 4}, {10, 11, 12, 13, 14}, {}, {4, 5, 6, 7, 8, 9}});
  CHECK(e.metrics.at("span_f1").get<double>() == Approx(s.f1));
  CHECK(e.metrics.at("span_recall").get<double>() == Approx(s.recall));
  CHECK(e.metrics.at("rows") == 4);
  CHECK_THAT(e.predictions_csv, Catch::StartsWith("id,spans\n\"0\",\""));
  // All but padding: every word read at threshold 0 (its probability > 0) is marked, gaps included.
  CHECK(model->span_tagger()->text_spans({"ab cd"}, 8, 1e-9).front() == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  const metrics::LogitAdjustment a = data->logit_offsets(model->module(), rows);
  REQUIRE(a.offsets.size() == 1);
  CHECK(a.metric == "span_f1");
  CHECK(a.after >= a.before);
  CHECK(a.before == Approx(s.f1));
  // A CRF tagger's loss is each text's tag likelihood, which --pos-weight does not weigh: refused
  // when the run is planned (the default sigmoid per token takes it).
  const auto& entry = models::find_model("bilstm-tagger");
  torch::jit::Module with_crf = entry.build(models::resolve_config(entry, {{"crf", true}}), nn::Runtime::kPortable);
  torch::jit::Module plain = entry.build(models::resolve_config(entry, {}), nn::Runtime::kPortable);
  CHECK_THROWS_WITH(tasks::span_tagging().check_loss_weights({"3", ""}, with_crf),
                    "--pos-weight: weighs the tokens of a tagger without a CRF (--set crf=false)");
  CHECK_NOTHROW(tasks::span_tagging().check_loss_weights({"", ""}, with_crf));
  CHECK_NOTHROW(tasks::span_tagging().check_loss_weights({"3", ""}, plain));
  const tasks::Batch b = data->batch(rows, tasks::Width::kData);
  torch::jit::Module module = model->module();
  CHECK(data->loss(module, b, data->loss_weights({"3", ""}, rows)).value.item<double>() > 0);
  // --span-f1-loss belongs to span taggers: another task's loss has no soft F1.
  CHECK_NOTHROW(tasks::span_tagging().check_loss_weights({"", "", 1.0}, plain));
  CHECK_THROWS_WITH(tasks::text_classification().check_loss_weights({"", "", 1.0}, plain),
                    Catch::Contains("--span-f1-loss is for span taggers"));
  const auto explained = model->explain({{"you idiot", {}}}, 8);
  const nlohmann::ordered_json j = explained->json(0);
  CHECK(j.at("words").size() == 2);
  CHECK(j.at("token_probabilities").size() == 2);
  CHECK(j.at("spans").get<std::vector<std::int64_t>>() == model->span_tagger()->text_spans({"you idiot"}, 8, 0.5).front());
  tasks::ExplainOptions labelled;
  labelled.label = "toxic";
  CHECK_THROWS_WITH(model->explain({{"x", {}}}, 8, labelled), Catch::Contains("no labels"));
  fs::remove_all(dir);
}

TEST_CASE("span tagging: the loss is the tokens' cross-entropy plus each text's soft F1 miss, weighed by its tokens", "[tasks][spans]") {
  const fs::path dir = scratch("span_loss");
  const std::string csv = write_csv(dir / "tsd.csv", "spans,text", span_rows());
  const auto& entry = models::find_model("bilstm-tagger");
  const auto data = tasks::span_tagging().open(train_inputs(tasks::span_tagging(), {{"csv", csv}}), entry, (dir / "run").string(), 1);
  const std::vector<std::int64_t> rows = {0, 1, 2, 3};
  const tasks::Batch b = data->batch(rows, tasks::Width::kLongestRow);
  for (const bool crf : {false, true}) {
    CAPTURE(crf);
    const nlohmann::json config = models::fit_config(entry, {{"crf", crf}, {"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
    torch::manual_seed(7);
    torch::jit::Module module = entry.build(config, nn::Runtime::kPortable);
    module.eval();  // no dropout: the same logits twice
    models::SpanTagger tagger(module);
    const torch::Tensor ids = b.inputs.at(0).toTensor();
    torch::Tensor logits, tokens_loss;
    if (crf) {
      auto [nll, l] = tagger.member_crf_loss(ids, b.targets).front();
      logits = l, tokens_loss = nll.sum();
    } else {
      logits = tagger.member_logits(ids).front();
    }
    // By hand: per text its real tokens' probabilities, the soft F1 of its marked ones.
    double bce = 0, misses = 0, tokens = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::int64_t n = data->lengths()[i];
      double pm = 0, p = 0, y = 0;
      for (std::int64_t t = 0; t < n; ++t) {
        const double z = logits[static_cast<std::int64_t>(i)][t].item<double>(), q = 1 / (1 + std::exp(-z));
        const double target = b.targets[static_cast<std::int64_t>(i)][t].item<double>();
        bce -= target * std::log(q) + (1 - target) * std::log(1 - q);
        pm += q * target, p += q, y += target;
      }
      if (y > 0) misses += static_cast<double>(n) * (1 - 2 * pm / (p + y));  // the text nobody marked adds nothing
      tokens += static_cast<double>(n);
    }
    REQUIRE(tokens == 14);
    const double base = crf ? tokens_loss.item<double>() : bce;
    CHECK(data->loss(module, b, data->loss_weights({"", "", 0.0}, rows)).value.item<double>() == Approx(base / tokens).epsilon(1e-5));
    CHECK(data->loss(module, b, data->loss_weights({"", "", 2.0}, rows)).value.item<double>() ==
          Approx((base + 2 * misses) / tokens).epsilon(1e-5));
    // The soft F1 reaches the emissions (with a CRF through its marginals).
    const auto dense_grad = [&](double f1_weight) {
      torch::manual_seed(7);
      torch::jit::Module m = entry.build(config, nn::Runtime::kPortable);
      m.eval();
      data->loss(m, b, data->loss_weights({"", "", f1_weight}, rows)).value.backward();
      return m.attr("dense").toModule().attr("weight").toTensor().grad().clone();
    };
    const torch::Tensor g0 = dense_grad(0), g1 = dense_grad(1);
    CHECK_FALSE(torch::allclose(g0, g1));
  }
  fs::remove_all(dir);
}

TEST_CASE("span tagging: a bad spans cell names its line and column; the inputs choose the model", "[tasks][spans]") {
  const fs::path dir = scratch("span_inputs");
  const std::string bad = write_csv(dir / "bad.csv", "spans,text", {"[0],\"ab\"", "\"[1, 7]\",\"ab\""});
  const auto& entry = models::find_model("bilstm-tagger");
  CHECK_THROWS_WITH(tasks::span_tagging().open(train_inputs(tasks::span_tagging(), {{"csv", bad}}), entry, (dir / "run").string(), 1),
                    Catch::Contains("bad.csv:3: column 1 (spans)"));
  data::Inputs plain, spans, both;
  plain.set("csv", bad, data::Inputs::Origin::kGiven);
  spans = plain, spans.set("spans-column", "spans", data::Inputs::Origin::kGiven);
  both = spans, both.set("label-column", "label", data::Inputs::Origin::kGiven);
  CHECK(tasks::model_for_training(plain).name == "bilstm-attention");
  CHECK(tasks::model_for_training(spans).name == "bilstm-tagger");
  CHECK_THROWS_WITH(tasks::model_for_training(both),
                    Catch::Contains("--spans-column is for span-tagging") && Catch::Contains("--label-column is for text-classification"));
  fs::remove_all(dir);
}
