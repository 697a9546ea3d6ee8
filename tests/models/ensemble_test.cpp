// Seed ensembles (models/ensemble.h): N copies of a text classifier read as one model whose
// probabilities and attention are the members' means, whose gradient methods see every member,
// and whose members learn independently.
#include "attn/models/ensemble.h"
#include "attn/models/saved_model.h"
#include "attn/text/sentences.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

namespace {

torch::jit::Module ensemble(const std::string& name, const nlohmann::json& overrides, int members) {
  torch::manual_seed(1);
  const auto& entry = models::find_model(name);
  torch::jit::Module m = models::build_model(entry, models::resolve_config(entry, overrides), members, nn::Runtime::kPortable);
  m.eval();
  return m;
}

const nlohmann::json kBilstm = {{"num_words", 30}, {"labels", 3}, {"embed_dim", 6}, {"lstm_units", 3}, {"output", "softmax"}};
const torch::Tensor kIds = torch::tensor({{0, 0, 5, 7, 9}, {3, 4, 1, 2, 8}}, torch::kInt64);

}  // namespace

TEST_CASE("ensemble: probabilities and attention are the members' means, each member its own initial weights", "[models][ensemble]") {
  for (const std::string output : {"softmax", "sigmoid"}) {
    INFO(output);
    nlohmann::json c = kBilstm;
    c["output"] = output;
    torch::jit::Module m = ensemble("bilstm-attention", c, 3);
    const std::vector<torch::jit::Module> members = models::ensemble_members(m);
    REQUIRE(members.size() == 3);
    CHECK_FALSE(torch::equal(members[0].attr("embedding").toTensor(), members[1].attr("embedding").toTensor()));
    torch::Tensor p = torch::zeros({2, 3}), a = torch::zeros({2, 5});
    for (const torch::jit::Module& member : members) {
      const auto [pm, am] = pair_of(torch::jit::Module(member).forward({kIds}));
      p += pm / 3;
      a += am / 3;
    }
    const auto [probabilities, attention] = pair_of(m.forward({kIds}));
    CHECK(torch::allclose(probabilities, p, 1e-5, 1e-6));
    CHECK(torch::allclose(attention, a, 1e-5, 1e-6));
    CHECK(torch::allclose(attention.sum(1), torch::ones({2}), 1e-5, 1e-6));
    // the logits give those probabilities through the model's own output
    const auto [logits, unused] = pair_of(m.run_method("logits", kIds));
    CHECK(torch::allclose(output == "softmax" ? torch::softmax(logits, 1) : torch::sigmoid(logits), p, 1e-5, 1e-6));
    // the output bias (what logit adjustment moves) is added to those logits
    torch::Tensor bias = models::output_bias(models::find_model("bilstm-attention"), m);
    REQUIRE(bias.numel() == 3);
    bias.add_(torch::tensor({0.5f, 0.0f, -1.0f}));
    const auto [moved, unused2] = pair_of(m.run_method("logits", kIds));
    CHECK(torch::allclose(moved, logits + torch::tensor({0.5f, 0.0f, -1.0f}), 1e-5, 1e-6));
  }
  // a single model is the registry's own build, its bias the entry's
  torch::jit::Module single = ensemble("bilstm-attention", kBilstm, 1);
  CHECK(models::ensemble_members(single).size() == 1);
  CHECK(single.hasattr("embedding"));
  CHECK(models::output_bias(models::find_model("bilstm-attention"), single).numel() == 3);
}

TEST_CASE("ensemble: the gradient methods read every member's embeddings side by side", "[models][ensemble]") {
  nlohmann::json c = kBilstm;
  c["subword_buckets"] = 10;
  torch::jit::Module m = ensemble("bilstm-attention", c, 2);
  const torch::Tensor ids = torch::tensor({{{5, 3, 7}, {0, 0, 0}, {9, 2, 0}}}, torch::kInt64);  // with n-gram rows
  const torch::Tensor x = m.run_method("embeddings", ids).toTensor();
  CHECK(x.sizes() == torch::IntArrayRef{1, 3, 12});
  const auto members = models::ensemble_members(m);
  CHECK(torch::equal(x.slice(2, 6), torch::jit::Module(members[1]).run_method("embeddings", ids).toTensor()));
  const auto [direct, a1] = pair_of(m.run_method("logits", ids));
  const auto [embedded, a2] = pair_of(m.run_method("logits_embedded", x, ids));
  CHECK(torch::allclose(direct, embedded, 1e-5, 1e-6));
  CHECK(torch::allclose(a1, a2, 1e-5, 1e-6));
  // a member's half of x moves only that member's logits
  const auto [z, unused] = pair_of(torch::jit::Module(members[0]).run_method("logits_embedded", x.slice(2, 0, 6), ids));
  const auto [z1, unused1] = pair_of(torch::jit::Module(members[1]).run_method("logits_embedded", x.slice(2, 6), ids));
  const torch::Tensor expected = torch::log((torch::softmax(z, 1) + torch::softmax(z1, 1)) / 2);
  CHECK(torch::allclose(direct, expected, 1e-5, 1e-6));
  // Python's n-gram helpers are the members'
  CHECK(m.run_method("subword_rows", std::string("idiot")).toIntVector() ==
        torch::jit::Module(members[0]).run_method("subword_rows", std::string("idiot")).toIntVector());
}

TEST_CASE("ensemble: training reads each member's logits, and a member's loss reaches only its own weights", "[models][ensemble]") {
  torch::jit::Module m = ensemble("bilstm-attention", kBilstm, 2);
  m.train();
  const auto members = models::ensemble_members(m);
  CHECK(torch::jit::Module(members[1]).is_training());  // the mode reaches the members (their dropout)
  const auto [z, a] = pair_of(m.run_method("member_logits", kIds));
  CHECK(z.sizes() == torch::IntArrayRef{2, 2, 3});
  CHECK(a.sizes() == torch::IntArrayRef{2, 2, 5});
  z[0].sum().backward();
  const torch::Tensor g0 = torch::jit::Module(members[0]).attr("dense").toModule().attr("weight").toTensor().grad();
  const torch::Tensor g1 = torch::jit::Module(members[1]).attr("dense").toModule().attr("weight").toTensor().grad();
  REQUIRE(g0.defined());
  CHECK(g0.abs().sum().item<float>() > 0);
  CHECK((!g1.defined() || g1.abs().sum().item<float>() == 0));
}

TEST_CASE("ensemble: hierarchical attention levels are the members' means", "[models][ensemble]") {
  torch::jit::Module h = ensemble("hierarchical-attention", {{"num_words", 30}, {"labels", 2}, {"embed_dim", 6}, {"gru_units", 3}}, 3);
  const torch::Tensor ids =
      torch::tensor({{text::encode_word(1, 0), text::encode_word(2, 0), text::encode_word(3, 1), text::encode_word(4, 1)}},
                    torch::kInt64);  // two sentences
  const auto [w, s] = pair_of(h.run_method("attention_levels", ids));
  torch::Tensor w_mean = torch::zeros_like(w), s_mean = torch::zeros_like(s);
  for (const auto& member : models::ensemble_members(h)) {
    const auto [wm, sm] = pair_of(torch::jit::Module(member).run_method("attention_levels", ids));
    w_mean += wm / 3;
    s_mean += sm / 3;
  }
  CHECK(torch::allclose(w, w_mean, 1e-5, 1e-6));
  CHECK(torch::allclose(s, s_mean, 1e-5, 1e-6));
}

TEST_CASE("ensemble: saved and loaded natively, its members counted from config.json, errors", "[models][ensemble]") {
  const auto dir = scratch("ensemble");
  torch::jit::Module m = ensemble("bilstm-attention", kBilstm, 3);
  nlohmann::json config = {{"model", "bilstm-attention"},
                           {"model_config", models::resolve_config(models::find_model("bilstm-attention"), kBilstm)},
                           {"data", nlohmann::json::object()},
                           {"training", {{"ensemble", 3}}},
                           {"model_revision", models::find_model("bilstm-attention").revision}};
  const std::string path = (dir / "model.pt").string();
  models::save_model(path, m, config, {});
  models::SavedModel native = models::load_model(path, nn::Runtime::kNative);
  CHECK(models::ensemble_members(native.module).size() == 3);
  CHECK(native.module.attr("member2").toModule().attr("lstm").toModule().type()->name()->name() == "BiLSTMNative");
  const auto expected = pair_of(m.forward({kIds}));
  const auto got = pair_of(native.module.forward({kIds}));
  CHECK(torch::allclose(got.first, expected.first, 1e-5, 1e-6));
  CHECK(torch::allclose(got.second, expected.second, 1e-5, 1e-6));
  // a config.json whose member count is not the file's: the file is not what it says
  config["training"]["ensemble"] = 2;
  models::save_model(path, m, config, {});
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kNative),
                    Catch::Contains("model.pt: embedded config.json: key 'model_config' does not describe the model"));
  config["training"]["ensemble"] = "three";
  CHECK_THROWS_WITH(models::ensemble_size(config), Catch::Contains("training.ensemble must be a whole number of members"));
  CHECK(models::ensemble_size({{"model", "bilstm-attention"}}) == 1);
  // only text classifiers
  CHECK_THROWS_WITH(models::check_ensemble(models::find_model("feature-attention"), 2),
                    Catch::Contains("--ensemble: feature-attention is not a text classifier"));
  CHECK_THROWS_WITH(models::check_ensemble(models::find_model("bilstm-attention"), 0), Catch::Contains("--ensemble must be >= 1"));
  CHECK_NOTHROW(models::check_ensemble(models::find_model("seq2seq-attention"), 1));
  CHECK_THROWS_WITH(models::check_ensemble(models::find_model("transformer-classifier"), 2),
                    Catch::Contains("--ensemble: transformer-classifier cannot be ensembled"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("ensemble of span taggers: per token the members' mean probability, 0 at padding; each member's logits", "[models][ensemble]") {
  torch::jit::Module m = ensemble("bilstm-tagger", {{"num_words", 30}, {"embed_dim", 6}, {"lstm_units", 3}}, 3);
  const torch::Tensor ids = torch::tensor({{5, 7, 9, 0, 0}, {3, 4, 1, 2, 8}}, torch::kInt64);
  models::SpanTagger tagger(m);
  const std::vector<torch::Tensor> members = tagger.member_logits(ids);
  REQUIRE(members.size() == 3);
  CHECK_FALSE(torch::allclose(members[0], members[1]));  // each its own initial weights
  const torch::Tensor mean = (torch::sigmoid(members[0]) + torch::sigmoid(members[1]) + torch::sigmoid(members[2])) / 3;
  const torch::Tensor p = tagger.forward(ids), real = (ids != 0).to(torch::kFloat32);
  CHECK(torch::allclose(p, mean * real, 1e-5, 1e-6));
  CHECK(p[0][3].item<float>() == 0.0f);
  CHECK(torch::allclose(torch::sigmoid(tagger.logits(ids)), mean, 1e-5, 1e-6));
  // logit adjustment moves the ensemble's one bias
  const torch::Tensor bias = models::output_bias(models::find_model("bilstm-tagger"), m);
  REQUIRE(bias.numel() == 1);
}
