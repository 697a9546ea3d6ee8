// bilstm-tagger: a probability per token, 0 at padding, padding and batch mates changing nothing,
// the portable and native builds alike.
#include <algorithm>

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
