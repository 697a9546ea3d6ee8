// transformer-classifier (seed 003): padding masked, positions from each text's first token.
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("transformer-classifier: padding is masked and does not shift positions", "[models][transformer]") {
  torch::jit::Module m = build("transformer-classifier",
                               {{"num_words", 30}, {"labels", 2}, {"d_model", 16}, {"heads", 2}, {"layers", 2}, {"feedforward", 32}});
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
