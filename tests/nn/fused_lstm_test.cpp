// attn's fused LSTM kernel against torch.lstm run row by row on each row's real steps: outputs and
// every gradient, for any padding (pre, post, gaps, empty rows), distinct or repeated input rows, on
// one and two threads.
#include "attn/nn/fused_lstm.h"
#include "attn/nn/repeatable_backward.h"
#include "nn_test_util.h"

using namespace attn::nn;
using nn_test::ThreadsGuard;
using torch::Tensor;

namespace {

LstmWeights random_weights(std::int64_t input, std::int64_t hidden) { return nn_test::random_direction<LstmWeights>(4, input, hidden); }

/// The definition: each row's real steps, in order, through torch.lstm forwards and backwards.
Tensor reference(const Tensor& x, const Tensor& mask, const LstmWeights& f, const LstmWeights& b) {
  const std::int64_t T = x.size(1), H = f.weight_hh.size(1);
  std::vector<Tensor> rows;
  for (std::int64_t r = 0; r < x.size(0); ++r) {
    const Tensor positions = mask[r].nonzero().view({-1});
    Tensor out = torch::zeros({T, 2 * H});
    if (positions.numel() > 0) {
      const Tensor xs = x[r].index_select(0, positions).unsqueeze(0);
      const Tensor h0 = torch::zeros({1, 1, H});
      const auto run = [&](const Tensor& in, const LstmWeights& w) {
        return std::get<0>(
            torch::lstm(in, {h0, h0}, {w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh}, true, 1, 0.0, false, false, true))[0];
      };
      out = out.index_put({positions}, torch::cat({run(xs, f), run(xs.flip(1), b).flip(0)}, -1));
    }
    rows.push_back(out);
  }
  return torch::stack(rows);
}

}  // namespace

TEST_CASE("fused BiLSTM: outputs and every gradient equal torch.lstm's on each row's real steps", "[nn][lstm][fused]") {
  const int threads = GENERATE(1, 2);
  // Batches of few rows (row-major steps, W_hh^T read once for 12 rows; 35 = 12 + 12 + 11) and of
  // many (unit-major steps with LibTorch's products).
  const std::int64_t B = GENERATE(7, 35, 80);
  const bool repeats = GENERATE(false, true);
  ThreadsGuard guard(threads);
  torch::manual_seed(11);
  const std::int64_t T = 9, I = 5, H = 4;
  const Tensor x = nn_test::kernel_input(B, T, I, repeats);
  Tensor mask = torch::zeros({B, T}, torch::kBool);
  const std::int64_t lengths[] = {9, 3, 0, 5, 9, 1, 6};
  for (std::int64_t r = 0; r < B; ++r)  // pre-padded, post-padded, one row empty, one with gaps
    for (std::int64_t t = 0; t < lengths[r % 7]; ++t) mask[r][r % 2 ? t : T - lengths[r % 7] + t] = true;
  mask[6] = torch::tensor({1, 0, 1, 1, 0, 0, 1, 1, 1}, torch::kInt64) != 0;
  const LstmWeights f = random_weights(I, H), b = random_weights(I, H);
  const Tensor ours = bilstm_masked(x, mask, f, b), expected = reference(x, mask, f, b);
  CHECK(torch::allclose(ours, expected, 1e-5, 1e-6));
  CHECK(ours.masked_select(torch::logical_not(mask).unsqueeze(-1).expand_as(ours)).abs().sum().item<float>() == 0.0f);
  {
    torch::NoGradGuard scoring;  // scoring keeps nothing for a backward pass: the same outputs
    CHECK(torch::allclose(bilstm_masked(x, mask, f, b), expected, 1e-5, 1e-6));
  }
  const Tensor probe = torch::randn({B, T, 2 * H});
  const auto inputs = nn_test::kernel_inputs(x, f, b);
  const std::vector<Tensor> g_expected = nn_test::check_same_gradients(ours, expected, inputs, probe).second;
  // The importance methods' case: the weights constant, only x's gradient (repeated rows projected once).
  const Tensor y = bilstm_masked(x, mask, nn_test::constant_direction(f), nn_test::constant_direction(b));
  const Tensor x_only = torch::autograd::grad({(y * probe).sum()}, {x})[0];
  CHECK(torch::allclose(x_only, g_expected[0], 1e-4, 1e-5));
}

TEST_CASE("fused BiLSTM: the same bits on one thread and two, scoring keeps no graph", "[nn][lstm][fused]") {
  torch::manual_seed(12);
  const std::int64_t B = GENERATE(20, 100);  // both kinds of batch
  const Tensor x = torch::randn({B, 30, 16}).requires_grad_();
  const Tensor mask = torch::arange(30).unsqueeze(0) >= torch::randint(0, 30, {B, 1});
  const LstmWeights f = random_weights(16, 8), b = random_weights(16, 8);
  const Tensor probe = torch::randn({B, 30, 16});
  std::vector<std::vector<Tensor>> results;
  for (int threads : {1, 2}) {
    ThreadsGuard guard(threads);
    const Tensor y = bilstm_masked(x, mask, f, b);
    std::vector<Tensor> r = torch::autograd::grad({(y * probe).sum()}, nn_test::kernel_inputs(x, f, b));
    r.push_back(y.detach());
    results.push_back(r);
  }
  for (std::size_t k = 0; k < results[0].size(); ++k) CHECK(torch::equal(results[0][k], results[1][k]));
  torch::NoGradGuard no_grad;
  CHECK_FALSE(bilstm_masked(x, mask, f, b).requires_grad());
}

TEST_CASE("fused BiLSTM: a TorchScript operator, with clear errors for inputs it does not take", "[nn][lstm][fused]") {
  register_fused_lstm();
  torch::jit::Module m = nn_test::kernel_module("bilstm_masked", "mask");
  const LstmWeights f = random_weights(3, 2), b = random_weights(3, 2);
  const Tensor x = torch::randn({2, 4, 3}), mask = torch::ones({2, 4}, torch::kBool);
  CHECK(torch::allclose(m.forward({x, mask, nn_test::both_directions(f, b)}).toTensor(), bilstm_masked(x, mask, f, b)));
  CHECK_THROWS_WITH(bilstm_masked(x.to(torch::kFloat64), mask, f, b), Catch::Contains("float32"));
  CHECK_THROWS_WITH(bilstm_masked(x, torch::ones({2, 5}), f, b), Catch::Contains("mask must be [B, T]"));
  CHECK_THROWS_WITH(bilstm_masked(torch::randn({2, 4, 7}), mask, f, b), Catch::Contains("another shape"));
}

TEST_CASE("fused BiLSTM: a second backward pass through one forward pass is refused, not wrong", "[nn][lstm][fused]") {
  // The backward pass writes the gates' gradients over the saved gates.
  torch::manual_seed(13);
  const Tensor x = torch::randn({70, 6, 5}).requires_grad_();
  const Tensor mask = torch::ones({70, 6}, torch::kBool);
  const LstmWeights f = random_weights(5, 4), b = random_weights(5, 4);
  const Tensor loss = bilstm_masked(x, mask, f, b).pow(2).sum();
  const Tensor g = torch::autograd::grad({loss}, {x}, {}, /*retain_graph=*/true)[0];
  CHECK(g.abs().sum().item<float>() > 0.0f);
  CHECK_THROWS_WITH(torch::autograd::grad({loss}, {x}), Catch::Contains("second backward pass"));
}

TEST_CASE("fused BiLSTM: under RepeatableBackward a forward pass serves several backward passes, each exact", "[nn][lstm][fused]") {
  // What the importance methods do: one forward pass, a backward pass per label, the weights constant.
  torch::manual_seed(14);
  const Tensor x = torch::randn({9, 6, 5}).requires_grad_();
  Tensor mask = torch::ones({9, 6}, torch::kBool);
  mask.index_put_({0, torch::indexing::Slice(0, 2)}, false);  // pre padding on a row
  LstmWeights f = random_weights(5, 4), b = random_weights(5, 4);
  for (LstmWeights* w : {&f, &b})
    for (Tensor* t : {&w->weight_ih, &w->weight_hh, &w->bias_ih, &w->bias_hh}) t->set_requires_grad(false);
  const Tensor probe1 = torch::randn({9, 6, 8}), probe2 = torch::randn({9, 6, 8});
  Tensor once1, once2;
  {
    const Tensor y = bilstm_masked(x, mask, f, b);
    once1 = torch::autograd::grad({(y * probe1).sum()}, {x})[0];
  }
  {
    const Tensor y = bilstm_masked(x, mask, f, b);
    once2 = torch::autograd::grad({(y * probe2).sum()}, {x})[0];
  }
  const RepeatableBackward repeatable;
  const Tensor y = bilstm_masked(x, mask, f, b);
  const Tensor g1 = torch::autograd::grad({(y * probe1).sum()}, {x}, {}, /*retain_graph=*/true)[0];
  const Tensor g2 = torch::autograd::grad({(y * probe2).sum()}, {x}, {}, /*retain_graph=*/true)[0];
  const Tensor g1_again = torch::autograd::grad({(y * probe1).sum()}, {x})[0];
  CHECK(torch::equal(g1, once1));
  CHECK(torch::equal(g2, once2));
  CHECK(torch::equal(g1_again, once1));
}
