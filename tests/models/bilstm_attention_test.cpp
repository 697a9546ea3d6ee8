// bilstm-attention (seed 000): shapes, padding masked and skipped, the seed's parameter layout.
#include <algorithm>

#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("bilstm-attention: shapes, masked padding, the seed's parameter layout", "[models][bilstm]") {
  const auto& entry = models::find_model("bilstm-attention");
  torch::jit::Module m = entry.build(models::resolve_config(entry, {{"num_words", 50}, {"labels", 3}, {"embed_dim", 8}, {"lstm_units", 4}}), nn::Runtime::kNative);
  m.eval();
  const torch::Tensor ids = torch::tensor({{0, 0, 5, 7, 9}, {3, 4, 1, 2, 8}}, torch::kInt64);
  const auto out = m.forward({ids}).toTuple();
  const torch::Tensor probs = out->elements()[0].toTensor(), att = out->elements()[1].toTensor();
  CHECK(probs.sizes() == torch::IntArrayRef({2, 3}));
  CHECK(att.sizes() == torch::IntArrayRef({2, 5}));
  CHECK(att[0][0].item<float>() == 0.0f);
  CHECK(att[0][1].item<float>() == 0.0f);
  CHECK(att.sum(1)[0].item<float>() == Approx(1.0f));
  CHECK(((probs > 0) & (probs < 1)).all().item<bool>());
  // Padding (pre or post) and batch mates change nothing: the LSTM skips padding.
  const auto alone = m.forward({torch::tensor({{5, 7, 9}}, torch::kInt64)}).toTuple();
  const torch::Tensor post = torch::tensor({{5, 7, 9, 0, 0}, {3, 4, 1, 2, 8}}, torch::kInt64);
  const auto batched = m.forward({post}).toTuple();
  CHECK(torch::allclose(alone->elements()[0].toTensor()[0], probs[0], 1e-5, 1e-6));
  CHECK(torch::allclose(alone->elements()[0].toTensor()[0], batched->elements()[0].toTensor()[0], 1e-5, 1e-6));
  CHECK(torch::allclose(alone->elements()[1].toTensor()[0], att[0].slice(0, 2), 1e-5, 1e-6));
  std::vector<std::string> names;
  for (const auto& p : m.named_parameters(true)) names.push_back(p.name);
  CHECK(names.front() == "embedding");
  CHECK(std::find(names.begin(), names.end(), "lstm.weight_hh_l0_reverse") != names.end());
  CHECK(std::find(names.begin(), names.end(), "attention.context.weight") != names.end());
  CHECK(names.back() == "dense.bias");
}

