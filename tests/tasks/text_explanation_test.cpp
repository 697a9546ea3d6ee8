// Text classifiers' explanations (tasks/text_explanation.h): each word of the text aligned with its
// tokens and weights, the importance methods on a small model, batches and threads that change no
// text's result, a hierarchical model's sentences.
#include <algorithm>
#include <cmath>

#include <torch/script.h>
#include <torch/utils.h>

#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/tasks/text_classification.h"
#include "tasks/text_explanation.h"  // (the tasks layer's own: explain_text, explain_texts)
#include "tasks_test_util.h"

using namespace attn;

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
