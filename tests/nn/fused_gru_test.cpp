// attn's fused GRU kernel against torch.gru run row by row on each row's real steps: outputs and
// every gradient, for rows of any length (empty ones included), and as a TorchScript operator.
#include "attn/nn/fused_gru.h"
#include "attn/nn/script_module.h"
#include "nn_test_util.h"

using namespace attn::nn;
using nn_test::ThreadsGuard;
using torch::Tensor;

namespace {

GruWeights random_gru(std::int64_t input, std::int64_t hidden) { return nn_test::random_direction<GruWeights>(3, input, hidden); }

/// The definition: each row's first lengths[r] steps through torch.gru forwards and backwards.
Tensor gru_reference(const Tensor& x, const std::vector<std::int64_t>& lengths, const GruWeights& f, const GruWeights& b) {
  const std::int64_t T = x.size(1), H = f.weight_hh.size(1);
  std::vector<Tensor> rows;
  for (std::int64_t r = 0; r < x.size(0); ++r) {
    const std::int64_t n = lengths[static_cast<std::size_t>(r)];
    Tensor out = torch::zeros({T, 2 * H});
    if (n > 0) {
      const Tensor xs = x[r].slice(0, 0, n).unsqueeze(0);
      const auto run = [&](const Tensor& in, const GruWeights& w) {
        return std::get<0>(
            torch::gru(in, torch::zeros({1, 1, H}), {w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh}, true, 1, 0.0, false, false, true))[0];
      };
      out = torch::cat({torch::cat({run(xs, f), run(xs.flip(1), b).flip(0)}, -1), torch::zeros({T - n, 2 * H})});
    }
    rows.push_back(out);
  }
  return torch::stack(rows);
}

}  // namespace

TEST_CASE("fused BiGRU: outputs and every gradient equal torch.gru's on each row's real steps", "[nn][gru][fused]") {
  const int threads = GENERATE(1, 2);
  const std::int64_t B = GENERATE(7, 90);
  const bool repeats = GENERATE(false, true);
  ThreadsGuard guard(threads);
  torch::manual_seed(21);
  const std::int64_t T = 9, I = 5, H = 4;
  const Tensor x = nn_test::kernel_input(B, T, I, repeats);
  std::vector<std::int64_t> lengths;
  const std::int64_t pattern[] = {9, 3, 0, 5, 9, 1, 6};
  for (std::int64_t r = 0; r < B; ++r) lengths.push_back(pattern[r % 7]);
  const GruWeights f = random_gru(I, H), b = random_gru(I, H);
  const Tensor ours = bigru_lengths(x, torch::tensor(lengths), f, b), expected = gru_reference(x, lengths, f, b);
  CHECK(torch::allclose(ours, expected, 1e-5, 1e-6));
  {
    torch::NoGradGuard scoring;  // scoring keeps nothing for a backward pass: the same outputs
    CHECK(torch::allclose(bigru_lengths(x, torch::tensor(lengths), f, b), expected, 1e-5, 1e-6));
  }
  const Tensor probe = torch::randn({B, T, 2 * H});
  const auto inputs = nn_test::kernel_inputs(x, f, b);
  const auto [g_ours, g_expected] = nn_test::check_same_gradients(ours, expected, inputs, probe, /*keep_graph=*/true);
  // What the forward pass saved is intact: a second backward pass (integrated gradients' repeated
  // passes) gives the same gradients.
  const auto again = torch::autograd::grad({(ours * probe).sum()}, inputs);
  for (std::size_t k = 0; k < inputs.size(); ++k) CHECK(torch::equal(again[k], g_ours[k]));
  // The importance methods' case: the weights constant, only x's gradient (repeated rows projected once).
  const Tensor y = bigru_lengths(x, torch::tensor(lengths), nn_test::constant_direction(f), nn_test::constant_direction(b));
  CHECK(torch::allclose(torch::autograd::grad({(y * probe).sum()}, {x})[0], g_expected[0], 1e-4, 1e-5));
}

TEST_CASE("fused BiGRU: a TorchScript operator, scoring keeps no graph, clear errors", "[nn][gru][fused]") {
  register_fused_gru();
  torch::jit::Module m = nn_test::kernel_module("bigru_lengths", "lengths");
  const GruWeights f = random_gru(3, 2), b = random_gru(3, 2);
  const Tensor x = torch::randn({2, 4, 3}), lengths = torch::tensor({4, 2}, torch::kInt64);
  CHECK(torch::allclose(m.forward({x, lengths, nn_test::both_directions(f, b)}).toTensor(), bigru_lengths(x, lengths, f, b)));
  {
    torch::NoGradGuard no_grad;
    CHECK_FALSE(bigru_lengths(x, lengths, f, b).requires_grad());
  }
  CHECK(bigru_lengths(torch::randn({0, 4, 3}), torch::zeros({0}, torch::kInt64), f, b).numel() == 0);
  CHECK_THROWS_WITH(bigru_lengths(x.to(torch::kFloat64), lengths, f, b), Catch::Contains("float32"));
  CHECK_THROWS_WITH(bigru_lengths(x, torch::tensor({5, 1}, torch::kInt64), f, b), Catch::Contains("not in 0..4"));
  CHECK_THROWS_WITH(bigru_lengths(torch::randn({2, 4, 7}), lengths, f, b), Catch::Contains("weights must be"));
}
