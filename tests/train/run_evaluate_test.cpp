// A trained run's model through the tasks layer: evaluate on the run's validation rows reproduces
// its last validation metrics (text, features, seq2seq); seq2seq-attention learns seed 003's toy
// exactly with every score; importance per output character on the learned toy.
#include <cmath>
#include <sstream>

#include <torch/script.h>

#include "attn/data/synthetic.h"
#include "attn/models/kinds.h"
#include "attn/tasks/seq2seq.h"
#include "tasks/task_support.h"
#include "train_test_util.h"

using namespace attn;
using namespace tasks_test;

namespace {
const std::vector<std::pair<std::string, std::string>> kPairs = {
    {"hello", "hola"}, {"how are you", "cómo estás"}, {"good morning", "buenos días"}};

std::string toy_csv(const fs::path& dir) {
  std::vector<std::string> rows;
  for (int i = 0; i < 20; ++i)
    for (const auto& [s, t] : kPairs) rows.push_back(s + "," + t);
  return write_csv(dir / "toy.csv", "source,target", rows);
}
}  // namespace

TEST_CASE("text: evaluate on a run's validation rows reproduces its last validation metrics", "[train][run][text]") {
  const auto dir = scratch("text_eval");
  const auto rows = text_rows(250);
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad,rude", rows);
  const auto last =
      train_run("bilstm-attention", (dir / "run").string(), {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}},
                {{"embed_dim", 8}, {"lstm_units", 4}}, {{"epochs", 2}, {"batch_size", 32}, {"val_split", 0.2}, {"lr", 0.01}, {"seed", 3}});
  const std::string val = write_csv(dir / "val.csv", "id,comment_text,bad,rude", std::vector<std::string>(rows.end() - 50, rows.end()));
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs none;
  const auto data = model->open_csv(val, none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {7, tasks::EvaluateOptions::Detail::kFull});
  CHECK(last.at("val_rows") == 50);
  CHECK(std::abs(e.metrics.at("loss").get<double>() - last.at("val_loss").get<double>()) <= 1e-6);
  CHECK(std::abs(e.metrics.at("mean_auc").get<double>() - last.at("val_mean_auc").get<double>()) <= 1e-6);
  CHECK(std::abs(e.metrics.at("auc").at("rude").get<double>() - last.at("val_auc").at("rude").get<double>()) <= 1e-6);
  fs::remove_all(dir);
}

TEST_CASE("features: evaluate on a run's validation rows reproduces its last validation metrics", "[train][run][features]") {
  const fs::path dir = scratch("features_eval");
  const auto [header, rows] = generated_features(1000, 4, "1");
  const auto last = train_run("feature-attention", (dir / "run").string(), {{"csv", write_csv(dir / "f.csv", header, rows)}}, {},
                              {{"epochs", 4}, {"batch_size", 64}, {"lr", 0.01}, {"seed", 1}});
  const auto model = tasks::open_model((dir / "run").string());
  CHECK(model->saved().config.at("training").at("val_split") == 0.3);  // the seed's recipe, from the registry
  data::Inputs none;
  const auto data = model->open_csv(write_csv(dir / "val.csv", header, std::vector<std::string>(rows.end() - 300, rows.end())), none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {1000, tasks::EvaluateOptions::Detail::kFull});
  for (const char* key : {"loss", "accuracy", "mean_auc"})
    CHECK(std::abs(e.metrics.at(key).get<double>() - last.at(std::string("val_") + key).get<double>()) <= 1e-6);
  CHECK(std::abs(e.metrics.at("mean_attention").at("x1").get<double>() - last.at("val_mean_attention").at("x1").get<double>()) <= 1e-6);
  fs::remove_all(dir);
}

TEST_CASE("seq2seq-attention learns seed 003's toy pairs exactly, with every score", "[train][run][seq2seq][slow]") {
  const fs::path dir = scratch("toy");
  const std::string csv = toy_csv(dir);
  std::vector<std::pair<std::string, std::string>> configs;
  for (const char* score : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) configs.push_back({score, "bahdanau"});
  configs.push_back({"general", "luong"});
  configs.push_back({"dot", "luong"});
  for (const auto& [score, style] : configs) {
    INFO(style << " / " << score);
    const std::string run = (dir / (score + "-" + style)).string();
    train_run("seq2seq-attention", run, {{"csv", csv}}, {{"score", score}, {"style", style}, {"units", 32}, {"embed_dim", 16}},
              {{"epochs", 30}, {"batch_size", 12}, {"val_split", 0.0}, {"lr", 0.01}});
    const auto model = tasks::open_model(run);
    std::vector<tasks::Input> inputs;
    for (const auto& p : kPairs) inputs.push_back({p.first, {}});
    const auto out = model->explain(inputs);
    const auto predicted = model->predict(inputs, 2);
    if (score == "additive") {  // beam search finds the pairs too
      data::Inputs beam;
      beam.set("beam", "4", data::Inputs::Origin::kGiven);
      model->configure(beam);
      const auto wide = model->explain(inputs);
      for (std::size_t i = 0; i < kPairs.size(); ++i) CHECK(wide->json(i).at("output") == kPairs[i].second);
      beam.set("beam", "0", data::Inputs::Origin::kGiven);
      CHECK_THROWS_AS(model->configure(beam), std::invalid_argument);
    }
    for (std::size_t i = 0; i < kPairs.size(); ++i) {
      const auto j = out->json(i);
      CHECK(j.at("output") == kPairs[i].second);
      CHECK(predicted[i].at("output") == kPairs[i].second);
      REQUIRE(j.at("attention").size() == j.at("output_tokens").size() * j.at("source_tokens").size());
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("seq2seq: evaluate on a run's validation rows reproduces its last validation metrics", "[train][run][seq2seq]") {
  const fs::path dir = scratch("s2s_eval");
  std::vector<std::string> rows;
  for (int i = 0; i < 200; ++i) rows.push_back(std::to_string(i) + "," + std::to_string(i * 7 % 1000));
  const std::string csv = write_csv(dir / "numbers.csv", "n,m", rows);
  const auto last =
      train_run("seq2seq-attention", (dir / "run").string(), {{"csv", csv}, {"source-column", "n"}, {"target-column", "m"}},
                {{"units", 8}, {"embed_dim", 4}}, {{"epochs", 2}, {"batch_size", 16}, {"val_split", 0.25}, {"lr", 0.01}, {"seed", 1}});
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs none;
  const auto data = model->open_csv(write_csv(dir / "val.csv", "n,m", std::vector<std::string>(rows.end() - 50, rows.end())), none, 1);
  const auto e = data->evaluate(model->module(), tasks::all_rows(data->rows()), {5, tasks::EvaluateOptions::Detail::kFull});
  for (const char* key : {"loss", "accuracy", "exact_match", "char_accuracy"})
    CHECK(std::abs(e.metrics.at(key).get<double>() - last.at(std::string("val_") + key).get<double>()) <= 1e-6);
  CHECK(e.metrics.at("rows").get<int>() == last.at("val_rows").get<int>());
  fs::remove_all(dir);
}

TEST_CASE("seq2seq importance: per output character over the source, complete and by deletion", "[train][run][seq2seq][importance]") {
  const fs::path dir = scratch("s2s_importance");
  train_run("seq2seq-attention", (dir / "run").string(), {{"csv", toy_csv(dir)}}, {{"units", 32}, {"embed_dim", 16}},
            {{"epochs", 30}, {"batch_size", 12}, {"val_split", 0.0}, {"lr", 0.01}, {"seed", 1}});
  const auto model = tasks::open_model((dir / "run").string());
  // Importance per output character over the source characters (the decoder fed the produced
  // output): integrated gradients of each character's log-probability add up to its change from
  // zero source embeddings; leave-one-out by deleting each source character.
  tasks::ExplainOptions o;
  o.methods = {models::Method::kAttention, models::Method::kIntegratedGradients, models::Method::kLeaveOneOut, models::Method::kGradient,
               models::Method::kGradInput};
  o.steps = 64;
  const std::string text = "hello";
  const auto j = model->explain({{text, {}}}, 8, o)->json(0);
  CHECK(j.at("output") == "hola");
  const std::size_t out = j.at("output_tokens").size(), src = j.at("source_tokens").size();
  REQUIRE(src == text.size());
  REQUIRE(out > 0);
  for (const char* m : {"attention", "integrated-gradients", "leave-one-out", "gradient", "grad-input"})
    CHECK(j.at("importance").at(m).size() == out * src);
  CHECK(j.at("importance").at("attention") == j.at("attention"));
  const auto& gaps = j.at("integrated_gradients").at("completeness_gap");
  REQUIRE(gaps.size() == out);
  for (const auto& g : gaps) CHECK(std::abs(g.get<double>()) < 1e-3);
  // leave-one-out of source character 0 for each output character j: p(y_j | text, y_<j) -
  // p(y_j | text without its first character, y_<j), computed here through the model's logits.
  models::Seq2SeqModel s2s(model->module());
  const text::Tokenizer source = tasks::embedded_tokenizer(model->saved(), "tokenizer.json");
  const text::Tokenizer target = tasks::embedded_tokenizer(model->saved(), "target_tokenizer.json");
  std::vector<std::int64_t> in = {s2s.start_id()}, ys;
  for (const auto& c : j.at("output_tokens")) ys.push_back(*target.word_index(c.get<std::string>()));
  in.insert(in.end(), ys.begin(), ys.end() - 1);
  const auto probabilities = [&](const std::string& text) {
    const text::Sequence ids = source.texts_to_sequences({text}).front();
    torch::NoGradGuard no_grad;
    const torch::Tensor logits = s2s.logits(torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64).view({1, -1}),
                                            torch::tensor(in, torch::kInt64).view({1, -1}))
                                     .scores;
    return torch::softmax(logits[0], -1);  // [out, V]
  };
  // grad-input of output character k over source character t: sum_e x_te * d log p(y_k) / d x_te,
  // by autograd through the file's logits_embedded.
  {
    const text::Sequence ids = source.texts_to_sequences({text}).front();
    const torch::Tensor src_ids = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64).view({1, -1});
    const torch::Tensor target_in = torch::tensor(in, torch::kInt64).view({1, -1});
    for (std::size_t k = 0; k < out; ++k) {
      torch::Tensor x = s2s.source_embeddings(src_ids).detach().requires_grad_(true);
      const torch::Tensor log_p = torch::log_softmax(s2s.logits_embedded(x, src_ids, target_in).scores[0], -1);
      log_p[static_cast<std::int64_t>(k)][ys[k]].backward();
      const torch::Tensor expected = (x * x.grad()).sum(-1)[0];
      for (std::size_t t = 0; t < src; ++t)
        CHECK(j.at("importance").at("grad-input")[k * src + t].get<double>() ==
              Approx(expected[static_cast<std::int64_t>(t)].item<double>()).margin(1e-5));
    }
  }
  const torch::Tensor whole = probabilities(text), without = probabilities(text.substr(1));
  for (std::size_t k = 0; k < out; ++k) {
    const auto y = ys[k], row = static_cast<std::int64_t>(k);
    CHECK(j.at("importance").at("leave-one-out")[k * src].get<double>() ==
          Approx(whole[row][y].item<double>() - without[row][y].item<double>()).margin(1e-5));
  }
  CHECK_THROWS_WITH(model->explain({{"1", {}}}, 8,
                                   [&] {
                                     auto bad = o;
                                     bad.label = "x";
                                     return bad;
                                   }()),
                    Catch::Contains("--label"));
  fs::remove_all(dir);
}
