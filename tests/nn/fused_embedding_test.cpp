// attn's scaled embedding lookup against torch.embedding(weight, ids) * scale: output and the
// weight's gradient (repeated ids, padding id 0), the same bits on one thread and two, and errors.
#include "attn/nn/fused_embedding.h"
#include "nn_test_util.h"

using namespace attn::nn;
using nn_test::max_diff;
using nn_test::ThreadsGuard;
using torch::Tensor;

TEST_CASE("fused embedding: the lookup times the masks, and the weight's gradient, equal LibTorch's", "[nn][embedding][fused]") {
  const int threads = GENERATE(1, 2);
  ThreadsGuard guard(threads);
  torch::manual_seed(31);
  const std::int64_t V = 40, C = 37, B = 6, T = 9;  // C: two tasks of 16 channels and a tail of 5
  const Tensor weight = torch::randn({V, C}).requires_grad_();
  Tensor ids = torch::randint(0, 8, {B, T}, torch::kInt64);  // few distinct ids: many repeats
  ids.slice(1, 0, 3).fill_(0);                               // padding
  const Tensor scale = torch::dropout(torch::ones({B, 1, C}), 0.4, true);
  const Tensor ours = embedding_scaled(weight, ids, scale), expected = torch::embedding(weight, ids) * scale;
  CHECK(torch::equal(ours, expected));  // the same products
  const Tensor probe = torch::randn({B, T, C});
  const Tensor g = torch::autograd::grad({(ours * probe).sum()}, {weight})[0];
  const Tensor g_expected = torch::autograd::grad({(expected * probe).sum()}, {weight})[0];
  CHECK(max_diff(g, g_expected) < 1e-5);
  CHECK(g[20].abs().max().item<float>() == 0.0f);  // an id no token has
}

TEST_CASE("fused embedding: the same bits on one thread and two", "[nn][embedding][fused]") {
  torch::manual_seed(32);
  const Tensor weight = torch::randn({300, 128}).requires_grad_();
  const Tensor ids = torch::randint(0, 300, {64, 50}, torch::kInt64);
  const Tensor scale = torch::rand({64, 1, 128});
  const Tensor probe = torch::randn({64, 50, 128});
  std::vector<Tensor> grads;
  for (int threads : {1, 2}) {
    ThreadsGuard guard(threads);
    grads.push_back(torch::autograd::grad({(embedding_scaled(weight, ids, scale) * probe).sum()}, {weight})[0]);
  }
  CHECK(torch::equal(grads[0], grads[1]));
}

TEST_CASE("fused embedding: ids out of range, a scale of the wrong shape or with a gradient are errors", "[nn][embedding][fused]") {
  const Tensor weight = torch::randn({10, 4});
  const Tensor scale = torch::ones({2, 1, 4});
  CHECK_THROWS_WITH(embedding_scaled(weight, torch::full({2, 3}, 10, torch::kInt64), scale), Catch::Contains("ids out of range [0, 10)"));
  CHECK_THROWS_WITH(embedding_scaled(weight, torch::full({2, 3}, -1, torch::kInt64), scale), Catch::Contains("ids out of range"));
  CHECK_THROWS_WITH(embedding_scaled(weight, torch::zeros({2, 3}, torch::kInt64), torch::ones({2, 4})),
                    Catch::Contains("scale must be float32 [B, 1, C]"));
  CHECK_THROWS_WITH(embedding_scaled(weight, torch::zeros({2, 3}, torch::kInt64), torch::ones({2, 1, 4}).requires_grad_()),
                    Catch::Contains("no gradient"));
  CHECK_THROWS_WITH(embedding_scaled(weight, torch::zeros({2, 3}, torch::kInt32), scale), Catch::Contains("int64"));
}

TEST_CASE("fused subword embedding: the mean of each token's rows times the masks, and both tables' gradients",
          "[nn][embedding][fused][subwords]") {
  const int threads = GENERATE(1, 2);
  ThreadsGuard guard(threads);
  torch::manual_seed(33);
  const std::int64_t V = 30, N = 20, C = 37, B = 5, T = 7, G = 4;
  const Tensor words = torch::randn({V, C}).requires_grad_(), ngrams = torch::randn({N, C}).requires_grad_();
  Tensor ids = torch::cat({torch::randint(0, 6, {B, T, 1}, torch::kInt64), torch::randint(0, 5, {B, T, G}, torch::kInt64)}, 2);
  ids.slice(1, 0, 2).fill_(0);  // padding: no row at all
  const Tensor scale = torch::dropout(torch::ones({B, 1, C}), 0.4, true);
  // the reference, as the models' TorchScript lookup computes it
  const Tensor own = (ids.select(2, 0) != 0).to(torch::kFloat32).unsqueeze(2);
  const Tensor grams = ids.narrow(2, 1, G), present = (grams != 0).to(torch::kFloat32).unsqueeze(3);
  const Tensor count = (own + present.sum(2)).clamp_min(1.0);
  const Tensor expected =
      (torch::embedding(words, ids.select(2, 0)) * own + (torch::embedding(ngrams, grams) * present).sum(2)) / count * scale;
  const Tensor ours = subword_embedding_scaled(words, ngrams, ids, scale);
  CHECK(max_diff(ours, expected) < 1e-5);
  CHECK(ours.slice(1, 0, 2).abs().max().item<float>() == 0.0f);
  const Tensor probe = torch::randn({B, T, C});
  const auto g = torch::autograd::grad({(ours * probe).sum()}, {words, ngrams});
  const auto g_expected = torch::autograd::grad({(expected * probe).sum()}, {words, ngrams});
  CHECK(max_diff(g[0], g_expected[0]) < 1e-5);
  CHECK(max_diff(g[1], g_expected[1]) < 1e-5);
  CHECK(g[1][0].abs().max().item<float>() == 0.0f);  // row 0 is no n-gram
  CHECK_THROWS_WITH(subword_embedding_scaled(words, ngrams, torch::full({1, 2, 3}, 25, torch::kInt64), torch::ones({1, 1, C})),
                    Catch::Contains("out of range"));
}
