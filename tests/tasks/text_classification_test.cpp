// Text classification: one scoring path for validation and evaluate, predict agreeing with explain,
// what a request costs, --deobfuscate, and --benign's bias metric.
#include <algorithm>
#include <cmath>

#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("text: evaluate scores a CSV, the same shared by two workers, predict agrees with explain, Kaggle's test labels",
          "[tasks][text][evaluate]") {
  const auto dir = scratch("text_eval");
  const auto rows = text_rows(250);
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad,rude", rows);
  saved_model("bilstm-attention", dir / "run", {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}},
              {{"embed_dim", 8}, {"lstm_units", 4}});
  const std::string val = write_csv(dir / "val.csv", "id,comment_text,bad,rude", std::vector<std::string>(rows.end() - 50, rows.end()));
  const auto model = tasks::open_model((dir / "run").string());
  // Its example inputs (the page's, a server's warm-up) come from its own data: the last rows.
  const std::vector<std::string> examples = model->examples();
  REQUIRE(examples.size() == 4);
  const std::string& last_row = rows.back();
  const auto c1 = last_row.find(','), c2 = last_row.find(',', c1 + 1);
  CHECK(examples[0] == last_row.substr(c1 + 1, c2 - c1 - 1));
  data::Inputs none;
  const auto data = model->open_csv(val, none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {7, tasks::EvaluateOptions::Detail::kFull});
  CHECK(e.metrics.at("rows") == 50);
  CHECK(e.metrics.at("auc").contains("rude"));
  CHECK_THAT(e.predictions_csv, Catch::StartsWith("id,bad,rude\nr200,"));
  // Shared by two workers (each scoring its share of the batches), the same bits: metrics and
  // predictions, rows in any order.
  check_shared_as_alone(*data, (dir / "run").string(), tasks::all_rows(data->rows()), 7, e);
  std::vector<std::int64_t> backwards = tasks::all_rows(data->rows());
  std::reverse(backwards.begin(), backwards.end());
  const auto e_backwards = data->evaluate(model->module(), backwards, {7, tasks::EvaluateOptions::Detail::kFull});
  CHECK_THAT(e_backwards.predictions_csv, Catch::StartsWith("id,bad,rude\nr249,"));
  check_shared_as_alone(*data, (dir / "run").string(), backwards, 7, e_backwards);
  // predict, the cheap path, gives what explain gives, whatever the batch mates and their lengths.
  const std::vector<tasks::Input> in = {
      {"thanks good edit stupid", {}}, {"sucks", {}}, {"page fine see talk source good edit", {}}, {"zzz", {}}};
  const auto predicted = model->predict(in, 2);
  const auto explained = model->explain(in);
  REQUIRE(predicted.size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    for (const char* label : {"bad", "rude"})
      CHECK(std::abs(predicted[i].at("probabilities").at(label).get<double>() -
                     explained->json(i).at("probabilities").at(label).get<double>()) <= 1e-6);
  // Kaggle's layout: labels in test_labels.csv by id, -1 rows not scored.
  std::vector<std::string> label_rows, texts;
  for (int i = 200; i < 250; ++i) {
    const std::string& r = rows[static_cast<std::size_t>(i)];
    const auto c1 = r.find(','), c2 = r.find(',', c1 + 1);
    texts.push_back(r.substr(0, c2));
    label_rows.push_back(r.substr(0, c1) + (i % 5 == 0 ? ",-1,-1" : r.substr(c2)));
  }
  data::Inputs kaggle;
  kaggle.set("labels-csv", write_csv(dir / "test_labels.csv", "id,bad,rude", label_rows), data::Inputs::Origin::kGiven);
  const auto scored = model->open_csv(write_csv(dir / "test.csv", "id,comment_text", texts), kaggle, 1);
  const auto k = scored->evaluate(model->module(), tasks::all_rows(scored->rows()), {});
  CHECK(k.metrics.at("rows") == 40);
  CHECK(k.metrics.at("rows_skipped") == 10);
  // What a request costs (a server's --max-request-cost): the words each text is read by, cut to
  // maxlen as in training, times its passes; leave-one-out by the text's own length.
  std::string long_text;
  for (int i = 0; i < 20; ++i) long_text += "good edit ";
  const tasks::Input long_input{long_text, {}}, unknown{"zzz qqq", {}};
  CHECK(model->units({long_input, unknown}) == std::vector<std::int64_t>{12, 0});
  tasks::ExplainOptions ig;
  ig.methods = {models::Method::kAttention, models::Method::kIntegratedGradients};
  ig.steps = 8;
  CHECK(model->request_cost({long_input, unknown}, ig) == 12 * (1 + 3 * 2 * 8 + 2) + 1 * (1 + 3 * 2 * 8 + 2));
  tasks::ExplainOptions loo;
  loo.methods = {models::Method::kLeaveOneOut};
  CHECK(model->request_cost({long_input, long_input}, loo) == 2 * 12 * (1 + 13));
  CHECK(model->request_cost({long_input}, {}) == 12);
  // Its bound, without reading the texts: every one at maxlen (here reached), never below the cost.
  CHECK(model->request_cost_bound(2, loo) == model->request_cost({long_input, long_input}, loo));
  CHECK(model->request_cost_bound(2, ig) >= model->request_cost({long_input, unknown}, ig));
  std::filesystem::remove_all(dir);
}

TEST_CASE("text: --deobfuscate reads every text through the normaliser, in training and after; config.json says so only then",
          "[tasks][text][deobfuscate]") {
  const auto dir = scratch("text_deobfuscate");
  // Training texts obfuscated: the normaliser's tokenizer counts them as the words they hide.
  std::vector<std::string> rows = text_rows(60);
  rows.push_back("x1,thanks st.upid id1ot \xD1\x95tupid,1,0");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad,rude", rows);
  saved_model("bilstm-attention", dir / "run", {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}, {"deobfuscate", "true"}},
              {{"embed_dim", 8}, {"lstm_units", 4}});
  saved_model("bilstm-attention", dir / "plain", {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}},
              {{"embed_dim", 8}, {"lstm_units", 4}});
  const auto model = tasks::open_model((dir / "run").string());
  CHECK(model->saved().config.at("data").at("deobfuscate") == true);
  CHECK_FALSE(tasks::open_model((dir / "plain").string())->saved().config.at("data").contains("deobfuscate"));
  const text::Tokenizer tok = text::Tokenizer::from_json(model->saved().files.at("tokenizer.json"), "tokenizer.json");
  CHECK_FALSE(tok.word_index("st.upid").has_value());
  CHECK_FALSE(tok.word_index("id1ot").has_value());
  CHECK(tok.word_index("stupid").has_value());
  // After: what an attacker writes is read as what it hides, everywhere the model reads.
  tasks::TextClassifierModel& classifier = *model->text_classifier();
  const std::vector<float> clean = classifier.text_probabilities({"thanks stupid idiot"}, 4);
  CHECK(classifier.text_probabilities({"thanks st..upid i d i o t"}, 4) == clean);
  CHECK(classifier.text_probabilities({"thanks stu\xE2\x80\x8Bpid id1ot"}, 4) == clean);
  const auto explained = classifier.text_explanations({{"thanks st.upid", {}}}, 4, {});
  REQUIRE(explained.size() == 1);
  REQUIRE(explained[0].words.size() == 2);
  CHECK(explained[0].words[1].word == "st.upid");  // the word as written, read as the word it hides
  CHECK(explained[0].words[1].tokens == std::vector<std::string>{"stupid"});
  // With the fitted vocabulary: a word split by a space or a hyphen is read whole, and explained as
  // the word it was read as.
  CHECK(classifier.text_probabilities({"thanks stu pid id-iot"}, 4) == clean);
  const auto split = classifier.text_explanations({{"thanks stu pid", {}}}, 4, {});
  REQUIRE(split.size() == 1);
  REQUIRE(split[0].words.size() == 2);
  // (a join across the text's spaces: its words are listed as the tokens read, not as written)
  CHECK(split[0].words[0].word == "thanks");
  CHECK(split[0].words[1].tokens == std::vector<std::string>{"stupid"});
  // The plain model reads the text as Keras does: st.upid is two unknown tokens.
  const auto plain = tasks::open_model((dir / "plain").string());
  tasks::TextClassifierModel& keras = *plain->text_classifier();
  CHECK(keras.text_probabilities({"thanks st..upid i d i o t"}, 4) != keras.text_probabilities({"thanks stupid idiot"}, 4));
  std::filesystem::remove_all(dir);
}

namespace {

/// ROC AUC by counting pairs (ties half): the brute force the bias metric is checked against.
double pair_auc(const std::vector<std::pair<float, bool>>& rows) {
  double pairs = 0, wins = 0;
  for (const auto& [p, positive] : rows)
    for (const auto& [q, negative_is_positive] : rows)
      if (positive && !negative_is_positive) {
        ++pairs;
        wins += p > q ? 1.0 : p == q ? 0.5 : 0.0;
      }
  return wins / pairs;
}

}  // namespace

TEST_CASE("text: --benign scores the bias metric of a model with one class per row on 1 - p(benign class)", "[tasks][text][bias]") {
  const auto dir = scratch("text_benign");
  const std::vector<std::string> rows = class_rows(90);
  saved_model("bilstm-attention", dir / "run",
              {{"csv", write_csv(dir / "train.csv", "post_id,text,label", rows)},
               {"text-column", "text"},
               {"id-column", "post_id"},
               {"label-column", "label"},
               {"maxlen", "12"}},
              {{"embed_dim", 8}, {"lstm_units", 4}});
  std::vector<std::string> annotated;
  for (std::size_t i = 0; i < rows.size(); ++i) annotated.push_back(rows[i] + (i % 4 == 0 ? ",1" : i % 4 == 1 ? ",0" : ","));
  const std::string csv = write_csv(dir / "eval.csv", "post_id,text,label,muslim", annotated);
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs in;
  in.set("identities", "muslim", data::Inputs::Origin::kGiven);
  in.set("benign", "normal", data::Inputs::Origin::kGiven);
  const auto e = model->open_csv(csv, in, 1)->evaluate(model->module(), tasks::all_rows(90), {8, tasks::EvaluateOptions::Detail::kFull});
  const auto& bias = e.metrics.at("bias");
  CHECK(bias.at("label") == "not normal");
  // Brute force: toxicity 1 - p(normal), a row toxic when its class is not normal; Jigsaw 2019's
  // final metric with one identity: 0.25 overall AUC + 0.75 mean of subgroup, BPSN and BNSP AUCs.
  const std::vector<std::string>& classes = model->facts().labels;
  const std::size_t normal = static_cast<std::size_t>(std::find(classes.begin(), classes.end(), "normal") - classes.begin());
  std::vector<std::pair<float, bool>> all, subgroup, bpsn, bnsp;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float toxicity = 1.0f - e.probabilities[i * classes.size() + normal];
    const bool toxic = rows[i].substr(rows[i].rfind(',') + 1) != "normal", in_group = i % 4 == 0;
    all.emplace_back(toxicity, toxic);
    if (in_group) subgroup.emplace_back(toxicity, toxic);
    if ((in_group && !toxic) || (!in_group && toxic)) bpsn.emplace_back(toxicity, toxic);
    if ((in_group && toxic) || (!in_group && !toxic)) bnsp.emplace_back(toxicity, toxic);
  }
  const double final_metric = 0.25 * pair_auc(all) + 0.75 * (pair_auc(subgroup) + pair_auc(bpsn) + pair_auc(bnsp)) / 3;
  CHECK(bias.at("final").get<double>() == Approx(final_metric).epsilon(1e-6));
  // Refused: a class the model does not have (naming them), with --bias-label, on 0/1 labels.
  in.set("benign", "kind", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(model->open_csv(csv, in, 1),
                    Catch::Contains("--benign: 'kind' is not one of this model's classes (") && Catch::Contains("normal"));
  in.set("benign", "normal", data::Inputs::Origin::kGiven);
  in.set("bias-label", "normal", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(model->open_csv(csv, in, 1), Catch::Contains("give one of --benign and --bias-label"));
  std::filesystem::remove_all(dir);
}
