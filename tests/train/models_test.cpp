// The models of seeds 001-003 (registry entries), their training tasks, and seed 003's toy
// translation learned exactly with every score.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "attn/models/explain.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/train/run.h"
#include "attn/train/task.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

torch::jit::Module build(const std::string& name, const nlohmann::json& overrides) {
  torch::manual_seed(1);
  const auto& entry = models::find_model(name);
  torch::jit::Module m = entry.build(models::resolve_config(entry, overrides));
  m.eval();
  return m;
}

std::int64_t parameter_count(const torch::jit::Module& m) {
  std::int64_t n = 0;
  for (const auto& p : m.named_parameters(true)) n += p.value.numel();
  return n;
}

std::pair<torch::Tensor, torch::Tensor> pair_of(const c10::IValue& v) {
  const auto t = v.toTuple();
  return {t->elements()[0].toTensor(), t->elements()[1].toTensor()};
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attn_models_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("registry: every seed's system, each with its task", "[models][registry]") {
  std::vector<std::string> names;
  for (const auto& m : models::models()) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"bilstm-attention", "feature-attention", "seq2seq-attention", "transformer-classifier"});
  CHECK(models::find_model("feature-attention").task == models::TaskKind::kFeatureClassification);
  CHECK(models::find_model("seq2seq-attention").task == models::TaskKind::kSequenceToSequence);
  CHECK(models::find_model("transformer-classifier").task == models::TaskKind::kTextClassification);
  const auto& s2s = models::find_model("seq2seq-attention");
  CHECK_THROWS_WITH(s2s.build(models::resolve_config(s2s, {{"score", "manhattan"}})),
                    Catch::Contains("unknown attention score 'manhattan'") && Catch::Contains("scaled-dot"));
  CHECK_THROWS_WITH(s2s.build(models::resolve_config(s2s, {{"style", "vaswani"}})), Catch::Contains("'style'"));
}

TEST_CASE("feature-attention: the seed's 121 parameters, weights over features sum to 1", "[models][features]") {
  torch::jit::Module m = build("feature-attention", {{"features", 10}});
  CHECK(parameter_count(m) == 121);
  const torch::Tensor x = torch::randn({5, 10});
  const auto [p, alpha] = pair_of(m.forward({x}));
  CHECK(p.sizes() == torch::IntArrayRef({5, 1}));
  CHECK(alpha.sizes() == torch::IntArrayRef({5, 10}));
  CHECK(torch::allclose(alpha.sum(1), torch::ones({5})));
  // The equation, by hand: p = sigmoid(w . (softmax(W x + b) * x) + c)
  const auto params = m.named_parameters(true);
  std::map<std::string, torch::Tensor> w;
  for (const auto& q : params) w[q.name] = q.value;
  const torch::Tensor a = torch::softmax(torch::matmul(x, w["attention.attention.weight"].t()) + w["attention.attention.bias"], 1);
  const torch::Tensor expected = torch::sigmoid(torch::matmul(a * x, w["output.weight"].t()) + w["output.bias"]);
  CHECK(torch::allclose(p, expected, 1e-5, 1e-6));
  torch::jit::Module deep = build("feature-attention", {{"features", 4}, {"hidden", {8, 3}}});
  CHECK(parameter_count(deep) == 4 * 4 + 4 + 4 * 8 + 8 + 8 * 3 + 3 + 3 + 1);
}

TEST_CASE("transformer-classifier: padding is masked and does not shift positions", "[models][transformer]") {
  torch::jit::Module m = build("transformer-classifier", {{"num_words", 30}, {"labels", 2}, {"d_model", 16}, {"heads", 2},
                                                          {"layers", 2}, {"feedforward", 32}});
  const torch::Tensor unpadded = torch::tensor({{5, 7, 9}}, torch::kInt64);
  const torch::Tensor pre = torch::tensor({{0, 0, 5, 7, 9}}, torch::kInt64);
  const torch::Tensor post = torch::tensor({{5, 7, 9, 0, 0}}, torch::kInt64);
  const auto [p0, a0] = pair_of(m.forward({unpadded}));
  const auto [p1, a1] = pair_of(m.forward({pre}));
  const auto [p2, a2] = pair_of(m.forward({post}));
  CHECK(torch::allclose(p0, p1, 1e-5, 1e-6));
  CHECK(torch::allclose(p0, p2, 1e-5, 1e-6));
  CHECK(a1[0][0].item<float>() == 0.0f);
  CHECK(a2[0][4].item<float>() == 0.0f);
  CHECK(torch::allclose(a1.slice(1, 2), a0, 1e-5, 1e-6));
  const auto layers = m.get_method("self_attention")({pre}).toTensorList();
  REQUIRE(layers.size() == 2);
  const torch::Tensor w = layers.get(0);
  CHECK(w.sizes() == torch::IntArrayRef({1, 2, 5, 5}));
  CHECK(w[0][1][3][0].item<float>() == 0.0f);  // a real token never attends to padding
  CHECK(w[0][1][3].sum().item<float>() == Approx(1.0f));
}

TEST_CASE("seq2seq-attention: every score and style; masked source; greedy decoding stops at the end", "[models][seq2seq]") {
  for (const char* style : {"bahdanau", "luong"})
    for (const char* score : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) {
      INFO(style << " / " << score);
      torch::jit::Module m = build("seq2seq-attention", {{"source_vocab", 12}, {"target_vocab", 9}, {"embed_dim", 6},
                                                          {"units", 5}, {"score", score}, {"style", style},
                                                          {"max_source_length", 16}, {"max_output_length", 7}});
      const torch::Tensor src = torch::tensor({{3, 4, 5, 0, 0}, {6, 7, 8, 9, 2}}, torch::kInt64);
      const torch::Tensor tgt = torch::tensor({{8, 1, 2, 3}, {8, 4, 5, 0}}, torch::kInt64);
      const auto [logits, att] = pair_of(m.get_method("logits")({src, tgt}));
      CHECK(logits.sizes() == torch::IntArrayRef({2, 4, 9}));
      CHECK(att.sizes() == torch::IntArrayRef({2, 4, 5}));
      CHECK(att[0].slice(1, 3).abs().sum().item<float>() == 0.0f);  // padding gets no attention
      CHECK(torch::allclose(att.sum(2), torch::ones({2, 4}), 1e-5, 1e-6));
      // The first row alone (no padding) gives what it gave in the padded batch.
      const auto [alone, att_alone] = pair_of(m.get_method("logits")({src.slice(0, 0, 1).slice(1, 0, 3), tgt.slice(0, 0, 1)}));
      CHECK(torch::allclose(alone, logits.slice(0, 0, 1), 1e-5, 1e-6));
      CHECK(torch::allclose(att_alone, att.slice(0, 0, 1).slice(2, 0, 3), 1e-5, 1e-6));
      const auto [ids, att2] = pair_of(m.forward({src}));
      CHECK(ids.size(0) == 2);
      CHECK(ids.size(1) <= 7);
      CHECK(att2.size(1) == ids.size(1));
      for (int b = 0; b < 2; ++b) {  // after the end id (7) only padding
        bool ended = false;
        for (int t = 0; t < ids.size(1); ++t) {
          const auto v = ids[b][t].item<std::int64_t>();
          if (ended) CHECK(v == 0);
          ended = ended || v == 7;
        }
      }
    }
}

TEST_CASE("string_accuracy: exact match and character accuracy, missing and extra characters count", "[models][seq2seq]") {
  const auto a = train::string_accuracy({"2000-01-01", "1999-12-3", "días"}, {"2000-01-01", "1999-12-31", "dias"});
  CHECK(a.exact_match == Approx(1.0 / 3));
  CHECK(a.char_accuracy == Approx((10.0 + 9 + 3) / (10 + 10 + 4)));
}

// Seed 003's toy translation: each score of the library learns the three pairs exactly.
TEST_CASE("seq2seq-attention learns seed 003's toy pairs exactly, with every score", "[models][seq2seq][slow]") {
  const fs::path dir = scratch("toy");
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"hello", "hola"}, {"how are you", "cómo estás"}, {"good morning", "buenos días"}};
  {
    std::ofstream f(dir / "toy.csv", std::ios::binary);
    f << "source,target\n";
    for (int i = 0; i < 20; ++i)
      for (const auto& [s, t] : pairs) f << s << "," << t << "\n";
  }
  std::vector<std::pair<std::string, std::string>> configs;
  for (const char* score : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) configs.push_back({score, "bahdanau"});
  configs.push_back({"general", "luong"});
  configs.push_back({"dot", "luong"});
  for (const auto& [score, style] : configs) {
    INFO(style << " / " << score);
    train::RunOptions o;
    o.out_dir = (dir / (score + "-" + style)).string();
    o.model = "seq2seq-attention";
    o.model_overrides = {{"score", score}, {"style", style}, {"units", 32}, {"embed_dim", 16}};
    o.train.epochs = 30;
    o.train.batch_size = 12;
    o.train.val_split = 0;
    o.train.lr = 0.01;
    o.data.csv = (dir / "toy.csv").string();
    std::atomic<bool> stop{false};
    train::TrainingRun run = train::TrainingRun::start(o);
    REQUIRE(run.train(stop, nullptr, nullptr));
    models::SavedModel model = models::load_model(o.out_dir);
    std::vector<std::string> sources;
    for (const auto& p : pairs) sources.push_back(p.first);
    const auto out = models::explain_translations(model, sources);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      CHECK(out[i].output == pairs[i].second);
      REQUIRE(out[i].attention.size() == out[i].output_tokens.size() * out[i].source_tokens.size());
    }
  }
  fs::remove_all(dir);
}
