// Text classification: explain's word alignment, and one scoring path for validation and evaluate.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>
#include <torch/utils.h>

#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/tasks/text_classification.h"
#include "tasks/classifier.h"
#include "tasks/text_explanation.h"  // (the tasks layer's own: explain_text, explain_texts)
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

namespace {

models::TextClassifier tiny_classifier(std::int64_t labels) {
  torch::manual_seed(3);
  const auto& entry = models::find_model("bilstm-attention");
  torch::jit::Module m = entry.build(
      models::resolve_config(entry, {{"num_words", 50}, {"labels", labels}, {"embed_dim", 8}, {"lstm_units", 4}}), nn::Runtime::kNative);
  m.eval();
  return models::TextClassifier(m);
}

std::shared_ptr<const text::Tokenizer> fitted(text::TokenizerOptions o) {
  auto t = std::make_shared<text::Tokenizer>(o);
  t->fit_on_texts({"the cat sat on the mat", "the dog sat", "a cat"});  // the:3 cat:2 sat:2 on mat dog a
  return t;
}

/// The tiny two-label classifier's data: labels bad and rude, maxlen 200.
tasks::TextDataConfig two_labels() {
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude"};
  config.maxlen = 200;
  return config;
}

const report::WordWeight& word(const report::TextExplanation& e, const std::string& w) {
  for (const auto& x : e.words)
    if (x.word == w) return x;
  FAIL("no word " << w);
  return e.words.front();
}

}  // namespace

TEST_CASE("explain_text: every word of the text, in order, with its status, kept weights sum to 1", "[tasks][text][explain]") {
  models::TextClassifier model = tiny_classifier(2);
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude"};
  config.maxlen = 200;
  const auto tok = fitted({});
  const auto e = tasks::explain_text(model, tok, config, "The cat, zebra !!! sat\ton the\nmat");
  std::vector<std::string> words;
  for (const auto& w : e.words) words.push_back(w.word);
  CHECK(words == std::vector<std::string>{"The", "cat,", "zebra", "!!!", "sat", "on", "the", "mat"});
  CHECK(word(e, "The").tokens == std::vector<std::string>{"the"});
  CHECK(word(e, "zebra").status == report::WordStatus::kDropped);
  CHECK(word(e, "zebra").reason == "unknown word");
  CHECK(word(e, "!!!").status == report::WordStatus::kFiltered);
  CHECK(e.ids.size() == 6);
  CHECK(e.attention.size() == 6);
  double kept = 0;
  for (const auto& w : e.words) kept += w.status == report::WordStatus::kKept ? w.weight : 0;
  CHECK(kept == Approx(1.0).epsilon(1e-5));
  CHECK(e.probabilities.size() == 2);
  CHECK(word(e, "cat,").weight == Approx(e.attention[1]));
}

TEST_CASE("explain_texts: in batches, each text's result is what it gets alone", "[tasks][text][explain]") {
  models::TextClassifier model = tiny_classifier(2);
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude"};
  config.maxlen = 200;
  const auto tok = fitted({});
  const std::vector<std::string> texts = {"the cat sat on the mat", "zebra", "a dog", "the cat sat on the mat the dog sat"};
  const auto batched = tasks::explain_texts(model, tok, config, texts, 3);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    const auto alone = tasks::explain_text(model, tok, config, texts[i]);
    CHECK(batched[i].ids == alone.ids);
    REQUIRE(batched[i].attention.size() == alone.attention.size());
    for (std::size_t k = 0; k < alone.attention.size(); ++k) CHECK(std::abs(batched[i].attention[k] - alone.attention[k]) <= 1e-6);
    for (std::size_t k = 0; k < 2; ++k) CHECK(std::abs(batched[i].probabilities[k] - alone.probabilities[k]) <= 1e-6);
    CHECK(batched[i].words.size() == alone.words.size());
  }
  CHECK(batched[1].ids.empty());  // no known word: the model's bias, no attention
  CHECK(batched[1].attention.empty());
}

TEST_CASE("explain_text: words beyond num_words, the OOV word, and the maxlen cut as in training", "[tasks][text][explain]") {
  models::TextClassifier model = tiny_classifier(1);
  tasks::TextDataConfig config;
  config.labels = {"bad"};
  config.maxlen = 3;
  text::TokenizerOptions limited;
  limited.num_words = 3;  // keeps "the" (1) and "cat" (2)
  auto e = tasks::explain_text(model, fitted(limited), config, "dog the cat");
  CHECK(word(e, "dog").status == report::WordStatus::kDropped);
  CHECK(word(e, "dog").reason == "beyond num_words");
  text::TokenizerOptions oov = limited;
  oov.oov_token = "<OOV>";
  e = tasks::explain_text(model, fitted(oov), config, "dog the cat");
  CHECK(word(e, "dog").status == report::WordStatus::kOov);  // unknown: the OOV index 1
  CHECK(word(e, "cat").status == report::WordStatus::kOov);  // with the OOV token at 1, "the" is 2 and "cat" 3, beyond num_words
  CHECK(e.ids == std::vector<std::int64_t>{1, 2, 1});
  // maxlen 3, truncating pre: a long text keeps its last 3 ids; the first words are cut.
  e = tasks::explain_text(model, fitted({}), config, "the cat sat on the mat");
  CHECK(e.ids.size() == 3);
  CHECK(e.words[0].status == report::WordStatus::kDropped);
  CHECK_THAT(e.words[0].reason, Catch::Contains("beyond maxlen 3"));
  CHECK(e.words[5].status == report::WordStatus::kKept);
  config.truncating = text::Side::kPost;
  e = tasks::explain_text(model, fitted({}), config, "the cat sat on the mat");
  CHECK(e.words[0].status == report::WordStatus::kKept);
  CHECK(e.words[5].status == report::WordStatus::kDropped);
}

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

namespace {

/// The portable (PyTorch-operator) build of `model` with its weights, in double precision: an
/// independent computation of what the native build computes.
torch::jit::Module portable_double(const models::TextClassifier& model, const std::string& name, const nlohmann::json& config) {
  const auto& entry = models::find_model(name);
  torch::jit::Module p = entry.build(models::resolve_config(entry, config), nn::Runtime::kPortable);
  models::copy_weights(model.module(), p);
  p.to(torch::kDouble);
  p.eval();
  return p;
}

/// z [labels] of embeddings x [1, T, E] (double) through the portable model.
torch::Tensor logits_of(torch::jit::Module& m, const torch::Tensor& x, const torch::Tensor& ids) {
  return m.get_method("logits_embedded")({x, ids}).toTuple()->elements()[0].toTensor()[0];
}

}  // namespace

TEST_CASE("importance methods on a small model: finite differences, completeness, deletion", "[tasks][text][importance]") {
  models::TextClassifier model = tiny_classifier(2);
  const nlohmann::json sizes = {{"num_words", 50}, {"labels", 2}, {"embed_dim", 8}, {"lstm_units", 4}};
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude"};
  config.maxlen = 200;
  const auto tok = fitted({});
  using M = models::Method;
  tasks::ExplainOptions o;
  o.methods = {M::kAttention, M::kGradient, M::kGradInput, M::kIntegratedGradients, M::kLeaveOneOut};
  o.steps = 50;
  const auto e = tasks::explain_text(model, tok, config, "the cat zebra sat on the mat", o);
  const auto T = static_cast<std::int64_t>(e.ids.size());
  REQUIRE(T == 6);
  REQUIRE(e.importance.size() == 5);
  for (const auto& m : e.importance) {
    REQUIRE(m.scores.size() == 2);
    for (const auto& s : m.scores) CHECK(static_cast<std::int64_t>(s.size()) == T);
  }
  CHECK(e.importance[0].scores[0] == e.attention);  // the attention, the same for every label

  torch::jit::Module p = portable_double(model, "bilstm-attention", sizes);
  const torch::Tensor ids = torch::tensor(e.ids, torch::kInt64).view({1, T});
  const torch::Tensor x = p.get_method("embeddings")({ids}).toTensor().detach();
  const double eps = 1e-5;
  for (std::int64_t l = 0; l < 2; ++l) {
    INFO("label " << l);
    // Finite differences, unit by unit and dimension by dimension.
    for (std::int64_t t = 0; t < T; ++t) {
      double norm = 0, dot = 0;
      for (std::int64_t d = 0; d < x.size(2); ++d) {
        torch::Tensor up = x.clone(), down = x.clone();
        up[0][t][d] += eps;
        down[0][t][d] -= eps;
        const double g = (logits_of(p, up, ids)[l].item<double>() - logits_of(p, down, ids)[l].item<double>()) / (2 * eps);
        norm += g * g;
        dot += g * x[0][t][d].item<double>();
      }
      CHECK(e.importance[1].scores[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)] ==
            Approx(std::sqrt(norm)).margin(1e-5).epsilon(1e-3));
      CHECK(e.importance[2].scores[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)] == Approx(dot).margin(1e-5).epsilon(1e-3));
    }
    // Completeness: integrated gradients add up to z(x) - z(zero embeddings), and the reported gap says how closely.
    const double total = logits_of(p, x, ids)[l].item<double>() - logits_of(p, torch::zeros_like(x), ids)[l].item<double>();
    double sum = 0;
    for (float v : e.importance[3].scores[static_cast<std::size_t>(l)]) sum += v;
    CHECK(sum == Approx(total).margin(1e-3));
    CHECK(e.integrated.completeness_gap[static_cast<std::size_t>(l)] == Approx(sum - total).margin(1e-4));
    // Leave-one-out by deleting each token and running the model.
    for (std::int64_t t = 0; t < T; ++t) {
      std::vector<std::int64_t> rest = e.ids;
      rest.erase(rest.begin() + t);
      const float without = model.forward(torch::tensor(rest, torch::kInt64).view({1, T - 1})).scores[0][l].item<float>();
      CHECK(e.importance[4].scores[static_cast<std::size_t>(l)][static_cast<std::size_t>(t)] ==
            Approx(e.probabilities[static_cast<std::size_t>(l)] - without).margin(1e-5));
    }
  }
  CHECK(e.integrated.steps == 50);
  // A word's score is its tokens' sum; JSON has every method for every label; text shows columns.
  CHECK(word(e, "cat").count == 1);
  CHECK(word(e, "zebra").count == 0);
  const auto j = report::to_json(e);
  CHECK(j.at("importance").at("integrated-gradients").at("rude").size() == 6);
  CHECK(j.at("integrated_gradients").at("steps") == 50);
  CHECK(report::to_json_line(e) == j.dump());
  const std::string text = report::to_text(e);
  CHECK_THAT(text, Catch::Contains("leave-one-out") && Catch::Contains("completeness gap") && Catch::Contains("dropped"));
  // The attention alone is today's explanation, byte for byte.
  const auto plain = tasks::explain_text(model, tok, config, "the cat zebra sat on the mat");
  CHECK_FALSE(report::to_json(plain).contains("importance"));
  CHECK(report::to_text(plain) == report::to_text(tasks::explain_text(model, tok, config, "the cat zebra sat on the mat", {})));
  // A label not the model's is refused, naming the flag and the labels.
  o.label = "toxic";
  CHECK_THROWS_WITH(tasks::explain_text(model, tok, config, "the cat", o), Catch::Contains("--label") && Catch::Contains("bad, rude"));
}

TEST_CASE("importance of texts in batches is each text's alone, empty texts get empty scores, never NaN", "[tasks][text][importance]") {
  models::TextClassifier model = tiny_classifier(2);
  const tasks::TextDataConfig config = two_labels();
  const auto tok = fitted({});
  tasks::ExplainOptions o;
  o.methods = {models::Method::kIntegratedGradients, models::Method::kLeaveOneOut, models::Method::kGradient};
  o.steps = 8;
  const std::vector<std::string> texts = {"the cat sat on the mat", "zebra", "a dog", "the cat sat on the mat the dog sat"};
  const auto batched = tasks::explain_texts(model, tok, config, texts, 3, o);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    const auto alone = tasks::explain_text(model, tok, config, texts[i], o);
    for (std::size_t m = 0; m < 3; ++m)
      for (std::size_t l = 0; l < 2; ++l) {
        REQUIRE(batched[i].importance[m].scores[l].size() == alone.importance[m].scores[l].size());
        for (std::size_t t = 0; t < alone.importance[m].scores[l].size(); ++t)
          CHECK(batched[i].importance[m].scores[l][t] == Approx(alone.importance[m].scores[l][t]).margin(1e-5));
      }
  }
  CHECK(batched[1].importance[0].scores[0].empty());  // no known word: nothing to score
  CHECK(batched[1].integrated.completeness_gap[0] == 0.0f);
  CHECK(report::to_json_line(batched[1]).find("null") == std::string::npos);
}

TEST_CASE("explain_texts on two threads (batches at once): the same bits as on one", "[tasks][text][importance]") {
  models::TextClassifier model = tiny_classifier(2);
  const tasks::TextDataConfig config = two_labels();
  const auto tok = fitted({});
  tasks::ExplainOptions o;
  o.methods = {models::Method::kAttention, models::Method::kGradInput, models::Method::kIntegratedGradients, models::Method::kLeaveOneOut};
  o.steps = 8;
  const std::vector<std::string> texts = {"the cat sat on the mat", "zebra",      "a dog", "the cat sat on the mat the dog sat", "the dog",
                                          "a cat on a mat",         "sat sat sat"};
  const int before = torch::get_num_threads();
  torch::set_num_threads(1);
  const auto one = tasks::explain_texts(model, tok, config, texts, 2, o);
  torch::set_num_threads(2);
  const auto two = tasks::explain_texts(model, tok, config, texts, 2, o);
  torch::set_num_threads(before);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    CHECK(two[i].probabilities == one[i].probabilities);
    CHECK(two[i].attention == one[i].attention);
    REQUIRE(two[i].importance.size() == one[i].importance.size());
    for (std::size_t m = 0; m < one[i].importance.size(); ++m) CHECK(two[i].importance[m].scores == one[i].importance[m].scores);
    CHECK(report::to_json_line(two[i]) == report::to_json_line(one[i]));
  }
}

TEST_CASE("explaining each text for its shown label alone: that label's scores, in JSON under its name", "[tasks][text][importance]") {
  models::TextClassifier model = tiny_classifier(3);
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude", "fine"};
  config.maxlen = 200;
  const auto tok = fitted({});
  tasks::ExplainOptions o;
  o.methods = {models::Method::kAttention, models::Method::kGradInput, models::Method::kIntegratedGradients, models::Method::kLeaveOneOut};
  o.steps = 8;
  const std::vector<std::string> texts = {"the cat sat on the mat", "a dog sat", "the mat"};
  const auto every = tasks::explain_texts(model, tok, config, texts, 2, o);
  o.shown_label_only = true;
  o.row_labels = {"fine", "", "bad"};  // the second text: --label's, and without it the most probable
  o.label = "rude";
  const auto one = tasks::explain_texts(model, tok, config, texts, 2, o);
  const std::vector<std::size_t> expected = {2, 1, 0};
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO(texts[i]);
    const std::size_t k = expected[i];
    CHECK(one[i].shown_label == k);
    CHECK(one[i].importance_label == static_cast<std::int64_t>(k));
    for (std::size_t m = 0; m < o.methods.size(); ++m) {
      REQUIRE(one[i].importance[m].scores.size() == 1);
      CHECK_THAT(one[i].importance[m].scores[0], Catch::Matchers::Approx(every[i].importance[m].scores[k]).margin(1e-5));
    }
    REQUIRE(one[i].integrated.completeness_gap.size() == 1);
    const auto j = report::to_json(one[i]);
    CHECK(j.at("word_importance").at("integrated-gradients").size() == 1);
    CHECK(j.at("word_importance").at("integrated-gradients").at(config.labels[k]) ==
          report::to_json(every[i]).at("word_importance").at("integrated-gradients").at(config.labels[k]));
    CHECK(j.at("integrated_gradients").at("completeness_gap").contains(config.labels[k]));
    CHECK(report::to_json_line(one[i]) == j.dump());
    CHECK_THAT(report::to_text(one[i]), Catch::Contains("importance for " + config.labels[k]));
  }
  o.label.clear();  // the most probable
  const auto top = tasks::explain_texts(model, tok, config, texts, 2, o);
  const auto& p = every[1].probabilities;
  CHECK(top[1].importance_label == std::max_element(p.begin(), p.end()) - p.begin());
  o.row_labels = {"fine"};
  CHECK_THROWS_WITH(tasks::explain_texts(model, tok, config, texts, 2, o), Catch::Contains("1 row labels for 3 texts"));
  o.row_labels = {"fine", "toxic", ""};  // a label not the model's, named by its row
  CHECK_THROWS_WITH(tasks::explain_texts(model, tok, config, texts, 2, o), Catch::Contains("row label 2: 'toxic'"));
}

TEST_CASE("the transformer's attention rollout: one score per token, summing to 1 like the pooling it rolls back",
          "[tasks][text][importance]") {
  torch::manual_seed(5);
  const auto& entry = models::find_model("transformer-classifier");
  torch::jit::Module m = entry.build(
      models::resolve_config(entry, {{"num_words", 50}, {"labels", 2}, {"d_model", 8}, {"heads", 2}, {"feedforward", 16}, {"layers", 2}}),
      nn::Runtime::kNative);
  m.eval();
  models::TextClassifier model(m);
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude"};
  config.maxlen = 200;
  tasks::ExplainOptions o;
  o.methods = {models::Method::kAttentionRollout, models::Method::kIntegratedGradients};
  o.steps = 20;
  const auto e = tasks::explain_text(model, fitted({}), config, "the cat sat on the mat", o);
  const auto& rollout = e.importance[0].scores[0];
  REQUIRE(rollout.size() == e.ids.size());
  double sum = 0;
  for (float v : rollout) sum += v;
  CHECK(sum == Approx(1.0).epsilon(1e-5));
  CHECK(e.importance[0].scores[1] == rollout);               // the same for every label
  CHECK(std::abs(e.integrated.completeness_gap[0]) < 1e-3);  // the gradient methods run on the transformer too
}

namespace {

models::TextClassifier tiny_hierarchical(std::int64_t labels) {
  torch::manual_seed(3);
  const auto& entry = models::find_model("hierarchical-attention");
  torch::jit::Module m = entry.build(
      models::resolve_config(entry, {{"num_words", 50}, {"labels", labels}, {"embed_dim", 8}, {"gru_units", 4}}), nn::Runtime::kNative);
  m.eval();
  return models::TextClassifier(m);
}

}  // namespace

TEST_CASE("explain for a hierarchical model: sentences with their weight and status, words within them", "[tasks][text][sentences]") {
  models::TextClassifier model = tiny_hierarchical(2);
  tasks::TextDataConfig config;
  config.labels = {"bad", "rude"};
  config.sentences = {2, 3};  // two sentences of three words
  config.maxlen = 6;
  config.padding = config.truncating = text::Side::kPost;
  const auto tok = fitted({});
  const std::string text = "The cat sat on the mat.\n!!!\nThe dog sat. A cat sat.";
  const auto e = tasks::explain_text(model, tok, config, text);
  REQUIRE(e.sentences.size() == 4);
  CHECK(e.sentences[0].text == "The cat sat on the mat.");
  CHECK(e.sentences[0].status == report::SentenceStatus::kRead);
  CHECK(e.sentences[1].status == report::SentenceStatus::kEmpty);  // "!!!" keeps no word: not counted
  CHECK(e.sentences[2].status == report::SentenceStatus::kRead);
  CHECK(e.sentences[3].status == report::SentenceStatus::kDropped);
  CHECK_THAT(e.sentences[3].reason, Catch::Contains("max_sentences 2"));
  CHECK(e.sentences[0].weight + e.sentences[2].weight == Approx(1.0).epsilon(1e-5));
  CHECK(e.ids.size() == 6);  // 3 words of the first sentence, 3 of the second
  CHECK(text::sentence_of(e.ids[3]) == 1);
  CHECK(word(e, "on").status == report::WordStatus::kDropped);
  CHECK_THAT(word(e, "on").reason, Catch::Contains("beyond max_words 3"));
  // Each read sentence's words share its weight: their effective weights sum to it, their own to 1.
  for (const auto& s : {e.sentences[0], e.sentences[2]}) {
    double effective = 0, within = 0;
    for (std::size_t k = s.first_word; k < s.first_word + s.words; ++k) {
      const auto& w = e.words[k];
      effective += w.status == report::WordStatus::kKept ? w.weight : 0;
      for (std::size_t t = w.first; t < w.first + w.count; ++t) within += e.word_attention[t];
    }
    CHECK(effective == Approx(s.weight).epsilon(1e-5));
    CHECK(within == Approx(1.0).epsilon(1e-5));
  }
  const auto j = report::to_json(e);
  REQUIRE(j.contains("sentences"));
  CHECK(j["sentences"][0]["words"][1]["word"] == "cat");
  CHECK(j.dump() == report::to_json_line(e));
  CHECK_THAT(report::to_text(e), Catch::Contains("sentence 4 dropped"));
  CHECK_THAT(report::to_html({e}), Catch::Contains("class=\"sentence\""));
  // Batched with others, a document gets what it gets alone.
  const auto batched = tasks::explain_texts(model, tok, config, {"A cat.", text, "Zebra."}, 3);
  CHECK(batched[1].ids == e.ids);
  for (std::size_t k = 0; k < e.attention.size(); ++k) CHECK(std::abs(batched[1].attention[k] - e.attention[k]) <= 1e-6);
  CHECK(batched[2].ids.empty());
  CHECK(batched[2].sentences.at(0).status == report::SentenceStatus::kEmpty);
}

TEST_CASE("a hierarchical model's data: sentences from the data, recorded, applied by evaluate and predict, flags checked",
          "[tasks][text][sentences]") {
  const auto dir = scratch("sentences");
  std::vector<std::string> rows;
  for (int i = 0; i < 40; ++i)
    rows.push_back("d" + std::to_string(i) + ",\"Thanks for the edit. The page is fine" + (i % 3 == 0 ? ". You are stupid" : "") +
                   ".\nSee the talk page.\"," + (i % 3 == 0 ? "1" : "0"));
  const std::string csv = write_csv(dir / "docs.csv", "id,comment_text,bad", rows);
  const std::string run =
      saved_model("hierarchical-attention", dir / "run", {{"csv", csv}, {"labels", "bad"}}, {{"embed_dim", 8}, {"gru_units", 4}});
  const auto model = tasks::open_model(run);
  const auto described = model->describe();
  REQUIRE(described.contains("sentences"));
  CHECK(described["sentences"]["max_sentences"] == 4);  // numpy.percentile([3]*26 + [4]*14, 95) = 4
  CHECK(described["sentences"]["max_words"] == 4);      // every sentence has 3 or 4 words
  CHECK(described["maxlen"] == 16);
  data::Inputs none;
  const auto scored = model->open_csv(csv, none, 1);
  const auto evaluation = scored->evaluate(model->module(), tasks::all_rows(scored->rows()), {});
  const auto predicted = model->predict({{"Thanks for the edit. You are stupid.", {}}}, 8);
  const auto explained = model->explain({{"Thanks for the edit. You are stupid.", {}}}, 8)->json(0);
  CHECK(predicted[0]["probabilities"]["bad"].get<double>() == Approx(explained["probabilities"]["bad"].get<double>()).margin(1e-6));
  CHECK(explained["sentences"].size() == 2);
  CHECK(evaluation.metrics["rows"] == 40);
  // --max-sentences is a hierarchical model's setting; --data has no texts to split.
  const tasks::Task& task = tasks::text_classification();
  data::Inputs in;
  in.set("csv", csv, data::Inputs::Origin::kGiven);
  in.set("max-sentences", "3", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(task.open(in, models::find_model("bilstm-attention"), (dir / "x").string(), 1), Catch::Contains("hierarchical models"));
  data::Inputs prepared;
  prepared.set("data", (dir / "run" / "data").string(), data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(task.open(prepared, models::find_model("hierarchical-attention"), (dir / "y").string(), 1), Catch::Contains("--csv"));
}

TEST_CASE(
    "attention trained on rationales: the marked words' tokens as explain aligns them, the loss and its gradient, native = "
    "portable = finite differences",
    "[tasks][text][rationales]") {
  const auto dir = scratch("rationales");
  // Row 1's marked word is two tokens; row 2 has no rationale; row 3's marked word is cut by maxlen
  // (truncating 'pre' keeps the end); row 4's marked word is dropped by the tokenizer's filters.
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad",
                                    {"a,\"you are a STUPID-idiot, see\",1", "b,thanks for the edit,0",
                                     "c,idiot one two three four five six seven,1", "d,\"see ... you later, are you\",1"});
  const std::string spans = write_csv(dir / "spans.csv", "spans,text",
                                      {"\"[10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]\",\"you are a STUPID-idiot, see\"",
                                       "\"[0, 1]\",idiot one two three four five six seven", "\"[4, 5, 6]\",\"see ... you later, are you\"",
                                       "\"[0]\",a text of no training row"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const data::Inputs in =
      train_inputs(task, {{"csv", csv}, {"labels", "bad"}, {"maxlen", "6"}, {"rationales", spans}, {"rationale-weight", "2"}});
  const auto data = task.open(in, entry, (dir / "run").string(), 1);
  const tasks::Batch b = data->batch({0, 1, 2, 3}, tasks::Width::kLongestRow);
  REQUIRE(b.attention_targets.defined());
  const auto at = [&](std::int64_t r) {
    const torch::Tensor g = b.attention_targets[r];
    return std::vector<float>(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  };
  CHECK(at(0) == std::vector<float>{0, 0, 0, 0.5f, 0.5f, 0});  // you are a [stupid idiot] see
  CHECK(at(1) == std::vector<float>(6, 0.0f));                 // no rationale
  CHECK(at(2) == std::vector<float>(6, 0.0f));                 // "idiot" is beyond maxlen
  CHECK(at(3) == std::vector<float>(6, 0.0f));                 // "..." has no token
  const auto report = nlohmann::json::parse(io::read_file((dir / "run" / "data" / "prepare.json").string()))["rationales"];
  CHECK(report["rows"] == 3);
  CHECK(report["rows_trained"] == 1);
  CHECK(report["rationales_unused"] == 1);
  CHECK(report["marked_words_not_read"] == 2);
  // A resumed run's data (Task::reopen) has them too.
  io::write_file_atomic((dir / "run" / "tokenizer.json").string(), data->files().at("tokenizer.json"));
  const auto again = task.reopen(data->data_config(), (dir / "run").string(), 1);
  CHECK(torch::equal(again->batch({0, 1, 2, 3}, tasks::Width::kLongestRow).attention_targets, b.attention_targets));

  // The loss: the classification's plus lambda x the mean over rows of -sum_t g_t log a_t.
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module native = entry.build(config, nn::Runtime::kNative);
  native.eval();  // no dropout: the same function as the portable build's
  const torch::Tensor ids = b.inputs.at(0).toTensor();
  const models::Scored out = models::TextClassifier(native).logits(ids);
  const tasks::Loss loss = data->loss(native, b, {});
  const double classification = tasks::binary_loss(out.scores, b.targets, {}).value.item<double>();
  const double by_hand = -(0.5 * std::log(out.attention[0][3].item<double>()) + 0.5 * std::log(out.attention[0][4].item<double>())) / 4;
  CHECK(loss.value.item<double>() == Approx(classification + 2 * by_hand).epsilon(1e-5));
  // Its gradient through attn's kernels (the attention's own backward pass) is the portable build's,
  // and that is the finite differences' of the loss in double precision.
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
  for (const auto& p : native.named_parameters()) names.push_back(p.name), params.push_back(p.value);
  const std::vector<torch::Tensor> g_native = torch::autograd::grad({loss.value}, params);
  torch::jit::Module portable = entry.build(config, nn::Runtime::kPortable);
  models::copy_weights(native, portable);
  portable.to(torch::kDouble);
  portable.eval();
  tasks::Batch d = b;
  d.targets = b.targets.to(torch::kDouble);
  d.attention_targets = b.attention_targets.to(torch::kDouble);
  std::vector<torch::Tensor> p_params;
  for (const auto& p : portable.named_parameters()) p_params.push_back(p.value);
  const torch::Tensor l_portable = data->loss(portable, d, {}).value;
  CHECK(l_portable.item<double>() == Approx(loss.value.item<double>()).epsilon(1e-5));
  const std::vector<torch::Tensor> g_portable = torch::autograd::grad({l_portable}, p_params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO(names[i]);
    CHECK(torch::allclose(g_native[i].to(torch::kDouble), g_portable[i], 1e-3, 1e-5));
  }
  torch::NoGradGuard no_grad;
  int checked = 0;
  for (std::size_t i = 0; i < p_params.size(); ++i) {
    if (names[i].find("attention") == std::string::npos) continue;
    torch::Tensor flat = p_params[i].view(-1);
    for (std::int64_t k = 0; k < std::min<std::int64_t>(flat.numel(), 4); ++k) {
      const double x = flat[k].item<double>(), h = 1e-6;
      flat[k] = x + h;
      const double up = data->loss(portable, d, {}).value.item<double>();
      flat[k] = x - h;
      const double down = data->loss(portable, d, {}).value.item<double>();
      flat[k] = x;
      INFO(names[i] << "[" << k << "]");
      CHECK((up - down) / (2 * h) == Approx(g_portable[i].view(-1)[k].item<double>()).margin(1e-7).epsilon(1e-5));
      ++checked;
    }
  }
  CHECK(checked >= 4);
}

TEST_CASE("attention trained on rationales: --rationale-target spans gives each marked span the same share, kept for --resume",
          "[tasks][text][rationales]") {
  const auto dir = scratch("rationale_target");
  // Two marked spans: "stupid idiot" (two words) and "see" (one); "you" between them is not marked.
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad", {"a,a stupid idiot you see,1", "b,thanks for the edit,0"});
  const std::string spans =
      write_csv(dir / "spans.csv", "spans,text", {"\"[2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 19, 20, 21]\",a stupid idiot you see"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto targets = [&](const std::string& run, std::vector<std::pair<std::string, std::string>> flags) {
    flags.insert(flags.end(), {{"csv", csv}, {"labels", "bad"}, {"maxlen", "5"}, {"rationales", spans}});
    const auto data = task.open(train_inputs(task, flags), entry, (dir / run).string(), 1);
    const torch::Tensor g = data->batch({0}, tasks::Width::kLongestRow).attention_targets[0];
    // A resumed run's data reads the same target from config.json's data block.
    io::write_file_atomic((dir / run / "tokenizer.json").string(), data->files().at("tokenizer.json"));
    const auto again = task.reopen(data->data_config(), (dir / run).string(), 1);
    CHECK(torch::equal(again->batch({0}, tasks::Width::kLongestRow).attention_targets[0], g));
    if (run == "words") {  // rationales.json as attn wrote it before it kept the spans (a row's entries in one list) reads alike
      const std::string marks = (dir / run / "data" / "rationales.json").string();
      CHECK(nlohmann::json::parse(io::read_file(marks))["rows"][0][1] == nlohmann::json::parse("[[1, 2], [4]]"));
      io::write_file_atomic(marks, R"({"rows": [[0, [1, 2, 4]]]})");
      const auto old = task.reopen(data->data_config(), (dir / run).string(), 1);
      CHECK(torch::equal(old->batch({0}, tasks::Width::kLongestRow).attention_targets[0], g));
    }
    return std::vector<float>(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  };
  const std::vector<float> words = targets("words", {});
  CHECK_THAT(words, Catch::Matchers::Approx(std::vector<float>{0, 1 / 3.0f, 1 / 3.0f, 0, 1 / 3.0f}));  // HateXplain's: each word alike
  CHECK(targets("words2", {{"rationale-target", "words"}}) == words);                                  // the default
  CHECK_THAT(targets("spans", {{"rationale-target", "spans"}}), Catch::Matchers::Approx(std::vector<float>{0, 0.25f, 0.25f, 0, 0.5f}));
  CHECK_THROWS_WITH(targets("bad", {{"rationale-target", "tokens"}}),
                    Catch::Contains("--rationale-target: 'tokens' is not words or spans"));
}

TEST_CASE("attention trained on rationales: bad flags and files refused, naming them", "[tasks][text][rationales]") {
  const auto dir = scratch("rationales_bad");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad", {"a,you are stupid,1", "b,thanks,0"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto open = [&](std::vector<std::pair<std::string, std::string>> flags) {
    flags.insert(flags.end(), {{"csv", csv}, {"labels", "bad"}});
    return task.open(train_inputs(task, flags), entry, (dir / "run").string(), 1);
  };
  const std::string spans = write_csv(dir / "spans.csv", "spans,text", {"\"[8]\",you are stupid"});
  CHECK_NOTHROW(open({{"rationales", spans}}));
  CHECK_THROWS_WITH(open({{"rationale-weight", "2"}}), Catch::Contains("--rationale-weight applies with --rationales"));
  CHECK_THROWS_WITH(open({{"rationale-target", "spans"}}), Catch::Contains("--rationale-target applies with --rationales"));
  CHECK_THROWS_WITH(open({{"rationales", spans}, {"rationale-weight", "-1"}}), Catch::Contains("--rationale-weight: '-1'"));
  CHECK_THROWS_WITH(open({{"rationales", spans}, {"rationale-docs", "d.jsonl"}}),
                    Catch::Contains("--rationale-docs is for ERASER's annotations"));
  const std::string other = write_csv(dir / "other.csv", "spans,text", {"\"[0]\",something else"});
  CHECK_THROWS_WITH(open({{"rationales", other}}), Catch::Contains("no text of " + other + " is a text of " + csv));
  // ERASER's words are the document split on single spaces; a tab inside one cannot line up.
  const std::string tabbed = write_csv(dir / "tabbed.csv", "id,comment_text,bad", {"a,\"you are\tstupid\",1", "b,thanks,0"});
  {
    std::ofstream(dir / "docs.jsonl") << R"({"docid": "a", "document": "you are\tstupid"})"
                                      << "\n";
    std::ofstream(dir / "ann.jsonl")
        << R"({"annotation_id": "a", "classification": "toxic", "evidences": [[{"docid": "a", "start_token": 1, "end_token": 2}]]})"
        << "\n";
  }
  const data::Inputs in = train_inputs(task, {{"csv", tabbed}, {"labels", "bad"}, {"rationales", (dir / "ann.jsonl").string()}});
  CHECK_THROWS_WITH(task.open(in, entry, (dir / "run2").string(), 1), Catch::Contains("ann.jsonl:1: the rationale's words do not line up"));
  const data::Inputs prepared = train_inputs(task, {{"data", (dir / "run" / "data").string()}, {"rationales", spans}});
  CHECK_THROWS_WITH(task.open(prepared, entry, (dir / "run3").string(), 1), Catch::Contains("--rationales re-reads the texts"));
}

TEST_CASE("bias-aware training: a weight column times the identity weights, scaled to mean 1, in the loss and kept for --resume",
          "[tasks][text][bias]") {
  const auto dir = scratch("row_weights");
  // Rows: a background negative, a background positive, a subgroup positive (muslim), a subgroup
  // negative (christian), a row annotated below 0.5 (background), one not annotated (background).
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic,insult,w,muslim,christian",
                                    {"a,thanks for the edit,0,0,1,0,0", "b,you are stupid,1,1,2,0.0,0.0", "c,stupid muslim,1,0,1,1,0",
                                     "d,a christian friend,0,0,0.5,0,1.0", "e,see the page,0,0,1,0.4,0", "f,you idiot,1,1,1,,"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto open = [&](std::vector<std::pair<std::string, std::string>> flags, const std::string& run = "run") {
    flags.insert(flags.end(), {{"csv", csv}, {"labels", "toxic"}});
    return task.open(train_inputs(task, flags), entry, (dir / run).string(), 1);
  };
  const auto weights_of = [](const tasks::Batch& b) {
    REQUIRE(b.row_weights.defined());
    return std::vector<float>(b.row_weights.data_ptr<float>(), b.row_weights.data_ptr<float>() + b.row_weights.numel());
  };
  const std::vector<std::int64_t> all = {0, 1, 2, 3, 4, 5};
  // Identity weights by the formula: 1, 2 (background positive), 2 (subgroup positive), 3 (subgroup
  // negative), 1, 2; times the column: 1, 4, 2, 1.5, 1, 2 (sum 11.5), scaled to mean 1.
  const auto data = open({{"weight-column", "w"}, {"identity-weighting", "true"}, {"identities", "muslim,christian"}});
  const std::vector<float> w = weights_of(data->batch(all, tasks::Width::kLongestRow));
  const std::vector<double> want = {1, 4, 2, 1.5, 1, 2};
  for (std::size_t r = 0; r < 6; ++r) CHECK(w[r] == Approx(want[r] * 6 / 11.5));
  const auto report = nlohmann::json::parse(io::read_file((dir / "run" / "data" / "prepare.json").string()))["row_weights"];
  CHECK(report["column"] == "w");
  CHECK(report["identity_weighting"]["subgroup_negatives"] == 1);
  CHECK(report["identity_weighting"]["subgroup_positives"] == 1);
  CHECK(report["identity_weighting"]["background_positives"] == 2);
  CHECK(report["identity_weighting"]["background_negatives"] == 2);
  // The identity columns by default: the 2019 competition's the file has (muslim, christian).
  const auto by_default = open({{"identity-weighting", "true"}}, "run2");
  const std::vector<float> iw = weights_of(by_default->batch(all, tasks::Width::kLongestRow));
  const std::vector<double> formula = {1, 2, 2, 3, 1, 2};
  for (std::size_t r = 0; r < 6; ++r) CHECK(iw[r] == Approx(formula[r] * 6 / 11));
  // The loss: the mean over rows of w_r x the row's binary cross-entropy.
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module model = entry.build(config, nn::Runtime::kNative);
  model.eval();
  const tasks::Batch b = data->batch({1, 3, 4}, tasks::Width::kLongestRow);
  const torch::Tensor logits = models::TextClassifier(model).logits(b.inputs.at(0).toTensor()).scores;
  double by_hand = 0;
  for (std::int64_t i = 0; i < 3; ++i) {
    const double z = logits[i][0].item<double>(), y = b.targets[i][0].item<double>(), p = 1 / (1 + std::exp(-z));
    by_hand += b.row_weights[i].item<double>() * -(y * std::log(p) + (1 - y) * std::log(1 - p)) / 3;
  }
  CHECK(data->loss(model, b, {}).value.item<double>() == Approx(by_hand).epsilon(1e-5));
  // A resumed run reads the same weights.
  io::write_file_atomic((dir / "run" / "tokenizer.json").string(), data->files().at("tokenizer.json"));
  const auto again = task.reopen(data->data_config(), (dir / "run").string(), 1);
  CHECK(weights_of(again->batch(all, tasks::Width::kLongestRow)) == w);
  // Validation rows are not weighted.
  const auto val = task.open_validation(csv, *data, (dir / "run").string(), 1);
  CHECK_FALSE(val->batch(all, tasks::Width::kLongestRow).row_weights.defined());
  CHECK_FALSE(open({}, "run3")->batch(all, tasks::Width::kLongestRow).row_weights.defined());
}

TEST_CASE("bias-aware training: auxiliary labels are outputs, reported apart, not scored", "[tasks][text][bias]") {
  const auto dir = scratch("aux_labels");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic,insult",
                                    {"a,thanks for the edit,0,0", "b,you are stupid,1,1", "c,stupid muslim,1,0", "d,a friend,0,1"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto data =
      task.open(train_inputs(task, {{"csv", csv}, {"labels", "toxic"}, {"aux-labels", "insult"}}), entry, (dir / "run").string(), 1);
  CHECK(data->sizes().labels == 2);  // an output per label, the auxiliary ones included
  CHECK(data->data_config().at("aux_labels") == nlohmann::json::array({"insult"}));
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module model = entry.build(config, nn::Runtime::kNative);
  const tasks::Evaluation e = data->evaluate(model, {0, 1, 2, 3}, {});
  CHECK(e.metrics.at("auc").size() == 1);  // toxic only
  CHECK(e.metrics.at("auc").contains("toxic"));
  CHECK(e.metrics.at("aux_auc").size() == 1);
  CHECK(e.metrics.at("aux_auc").contains("insult"));
  CHECK(e.metrics.at("aux_mean_auc") == e.metrics.at("aux_auc").at("insult"));
}

TEST_CASE("bias-aware training: bad flags and columns refused, naming them", "[tasks][text][bias]") {
  const auto dir = scratch("row_weights_bad");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,toxic,w,muslim", {"a,thanks,0,1,0", "b,you are stupid,1,-2,1"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto open = [&](std::vector<std::pair<std::string, std::string>> flags) {
    if (std::none_of(flags.begin(), flags.end(), [](const auto& f) { return f.first == "data"; })) flags.push_back({"csv", csv});
    if (std::none_of(flags.begin(), flags.end(), [](const auto& f) { return f.first == "label-column"; }))
      flags.push_back({"labels", "toxic"});
    return task.open(train_inputs(task, flags), entry, (dir / "run").string(), 1);
  };
  CHECK_THROWS_WITH(open({{"weight-column", "w"}}), Catch::Contains("train.csv:3: column 4 (w): a weight must be a number >= 0, got '-2'"));
  CHECK_THROWS_WITH(open({{"weight-column", "weight"}}), Catch::Contains("weight"));
  CHECK_THROWS_WITH(open({{"identities", "muslim"}}), Catch::Contains("--identities applies with --identity-weighting"));
  CHECK_THROWS_WITH(open({{"identity-weighting", "true"}, {"identities", "jewish"}}), Catch::Contains("jewish"));
  CHECK_THROWS_WITH(open({{"aux-labels", "toxic"}}), Catch::Contains("--aux-labels: 'toxic' is one of --labels"));
  CHECK_THROWS_WITH(open({{"aux-labels", "w,w"}}), Catch::Contains("--aux-labels: 'w' is named twice"));
  CHECK_THROWS_WITH(open({{"label-column", "toxic"}, {"aux-labels", "w"}}), Catch::Contains("one class per row"));
  CHECK_THROWS_WITH(open({{"label-column", "toxic"}, {"identity-weighting", "true"}}), Catch::Contains("one class per row"));
  const std::string plain = write_csv(dir / "plain.csv", "id,comment_text,toxic", {"a,thanks,0", "b,you are stupid,1"});
  CHECK_THROWS_WITH(task.open(train_inputs(task, {{"csv", plain}, {"labels", "toxic"}, {"identity-weighting", "true"}}), entry,
                              (dir / "run2").string(), 1),
                    Catch::Contains("--identity-weighting") && Catch::Contains("plain.csv"));
  CHECK_THROWS_WITH(open({{"data", (dir / "run" / "data").string()}, {"weight-column", "w"}}), Catch::Contains("not --data"));
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
