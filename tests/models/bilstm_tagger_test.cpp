// bilstm-tagger: a probability per token, 0 at padding, padding and batch mates changing nothing,
// the portable and native builds alike.
#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/models/kinds.h"
#include "attn/models/saved_model.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

namespace {

nlohmann::json small_tagger(std::int64_t buckets = 0) {
  return models::resolve_config(models::find_model("bilstm-tagger"),
                                {{"num_words", 50}, {"embed_dim", 8}, {"lstm_units", 4}, {"subword_buckets", buckets}});
}

}  // namespace

TEST_CASE("bilstm-tagger: a probability per token, 0 at padding, whatever the padding and the batch", "[models][tagger]") {
  const auto& entry = models::find_model("bilstm-tagger");
  CHECK(entry.kind == models::ModelKind::kSpanTagger);
  torch::jit::Module m = entry.build(small_tagger(), nn::Runtime::kNative);
  m.eval();
  models::SpanTagger tagger(m);
  const torch::Tensor ids = torch::tensor({{5, 7, 9, 0, 0}, {3, 4, 1, 2, 8}}, torch::kInt64);
  const torch::Tensor p = tagger.forward(ids);
  REQUIRE(p.sizes() == torch::IntArrayRef({2, 5}));
  CHECK(p[0][3].item<float>() == 0.0f);
  CHECK(p[0][4].item<float>() == 0.0f);
  CHECK(((p[1] > 0) & (p[1] < 1)).all().item<bool>());
  CHECK(torch::allclose(p, torch::sigmoid(tagger.logits(ids)) * (ids != 0).to(torch::kFloat32), 1e-6, 1e-7));
  const torch::Tensor alone = tagger.forward(torch::tensor({{5, 7, 9}}, torch::kInt64));
  CHECK(torch::allclose(alone[0], p[0].slice(0, 0, 3), 1e-5, 1e-6));
  // the portable build (what model.pt holds) gives the native build's probabilities
  torch::jit::Module portable = entry.build(small_tagger(), nn::Runtime::kPortable);
  models::copy_weights(m, portable);
  portable.eval();
  CHECK(torch::allclose(models::SpanTagger(portable).forward(ids), p, 1e-5, 1e-6));
  const models::LayerTable table = models::layer_table(entry, m, small_tagger());
  CHECK(table.unassigned.empty());
  CHECK(table.ambiguous.empty());
}

TEST_CASE("bilstm-tagger: with subwords, a word beyond the table is read by its n-grams", "[models][tagger]") {
  const auto& entry = models::find_model("bilstm-tagger");
  torch::jit::Module m = entry.build(small_tagger(64), nn::Runtime::kNative);
  m.eval();
  // [B, T, 1 + G]: a word row (0: none), then n-gram rows (0: none)
  const torch::Tensor ids = torch::tensor({{{4, 10, 11}, {0, 12, 13}, {0, 0, 0}}}, torch::kInt64);
  const torch::Tensor p = models::SpanTagger(m).forward(ids);
  REQUIRE(p.sizes() == torch::IntArrayRef({1, 3}));
  CHECK(p[0][1].item<float>() > 0.0f);   // no word row: still read
  CHECK(p[0][2].item<float>() == 0.0f);  // padding
  CHECK_THROWS_WITH(entry.build(models::resolve_config(entry, {{"output_dropout", 1.0}}), nn::Runtime::kPortable),
                    Catch::Contains("output_dropout must be in [0, 1)"));
}

TEST_CASE("bilstm-tagger's CRF: each text's tag likelihood and each token's marginal are those of every tag path summed",
          "[models][tagger]") {
  const auto& entry = models::find_model("bilstm-tagger");
  nlohmann::json config = small_tagger();
  config["crf"] = true;
  torch::jit::Module m = entry.build(config, nn::Runtime::kNative);
  m.eval();
  torch::jit::Module crf(m.attr("crf").toObject());
  {
    torch::NoGradGuard no_grad;  // scores far from their initial zeros, so that every term matters
    crf.attr("start").toTensor().copy_(torch::tensor({0.3f, -0.7f}));
    crf.attr("transitions").toTensor().copy_(torch::tensor({{0.5f, -1.2f}, {-0.4f, 1.1f}}));
    crf.attr("end").toTensor().copy_(torch::tensor({-0.2f, 0.6f}));
  }
  const torch::Tensor start = crf.attr("start").toTensor(), transitions = crf.attr("transitions").toTensor(),
                      end = crf.attr("end").toTensor();
  const torch::Tensor ids = torch::tensor({{5, 7, 9, 0, 0}, {3, 4, 1, 2, 8}}, torch::kInt64);
  // targets past a text's end are ignored, whatever they hold
  const torch::Tensor targets = torch::tensor({{1.f, 0.f, 1.f, 1.f, 1.f}, {0.f, 1.f, 1.f, 0.f, 1.f}});
  const torch::Tensor e = m.get_method("emissions")({ids}).toTensor();
  const torch::Tensor nll = m.get_method("crf_nll")({ids, targets}).toTensor();
  const torch::Tensor p = models::SpanTagger(m).forward(ids);
  for (std::int64_t b = 0; b < 2; ++b) {
    const std::int64_t length = (ids[b] != 0).sum().item<std::int64_t>();
    // every path of tags y over the text's tokens: start(y_0) + sum e_t [y_t = 1] + sum transition(y_t-1, y_t) + end(y_last)
    const auto tag = [](std::int64_t path, std::int64_t t) { return (path >> t) & 1; };
    std::vector<double> scores;
    for (std::int64_t path = 0; path < (std::int64_t{1} << length); ++path) {
      double s = start[tag(path, 0)].item<double>() + end[tag(path, length - 1)].item<double>();
      for (std::int64_t t = 0; t < length; ++t) {
        if (tag(path, t) == 1) s += e[b][t].item<double>();
        if (t > 0) s += transitions[tag(path, t - 1)][tag(path, t)].item<double>();
      }
      scores.push_back(s);
    }
    double log_z = -1e300;
    for (double s : scores) log_z = std::max(log_z, s);
    double sum = 0;
    for (double s : scores) sum += std::exp(s - log_z);
    log_z += std::log(sum);
    std::int64_t gold = 0;
    for (std::int64_t t = 0; t < length; ++t) gold |= static_cast<std::int64_t>(targets[b][t].item<float>()) << t;
    CHECK(nll[b].item<double>() == Approx(log_z - scores[static_cast<std::size_t>(gold)]).epsilon(1e-5));
    for (std::int64_t t = 0; t < length; ++t) {
      double marginal = 0;
      for (std::int64_t path = 0; path < static_cast<std::int64_t>(scores.size()); ++path)
        if (tag(path, t) == 1) marginal += std::exp(scores[static_cast<std::size_t>(path)] - log_z);
      CHECK(p[b][t].item<double>() == Approx(marginal).epsilon(1e-5));
    }
  }
  // A text with no tokens (all padding) has no tags: nothing to learn from it.
  CHECK(m.get_method("crf_nll")({torch::zeros({1, 3}, torch::kInt64), torch::zeros({1, 3})}).toTensor().item<double>() == 0.0);
  // Without a CRF each token stands alone: sigmoid(e_t + b).
  torch::jit::Module plain = entry.build(
      models::resolve_config(entry, {{"num_words", 50}, {"embed_dim", 8}, {"lstm_units", 4}, {"crf", false}}), nn::Runtime::kNative);
  plain.eval();
  CHECK(torch::allclose(models::SpanTagger(plain).forward(ids),
                        torch::sigmoid(plain.get_method("emissions")({ids}).toTensor()) * (ids != 0).to(torch::kFloat32), 1e-5, 1e-6));
  CHECK_FALSE(models::SpanTagger(plain).is_crf());
  CHECK(models::SpanTagger(m).is_crf());
}
