// attn's word-attention kernel against the equations as TorchScript operators (WordAttention's
// portable build): outputs and every gradient, with and without a mask (pre and post padding, gaps,
// a row without a real step), on one and two threads; and the native WordAttention module.
#include "attn/nn/fused_attention.h"
#include "attn/nn/attention.h"
#include "attn/nn/repeatable_backward.h"
#include "nn_test_util.h"

using namespace attn::nn;
using nn_test::max_diff;
using nn_test::param;
using nn_test::ThreadsGuard;
using torch::Tensor;

namespace {

/// [B, T] masks: full rows, pre- and post-padded rows, a row with gaps and one without a real step.
Tensor test_mask(std::int64_t B, std::int64_t T) {
  Tensor mask = torch::zeros({B, T}, torch::kBool);
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t n = (r * 5) % (T + 1);
    if (n > 0) mask[r].slice(0, r % 2 ? 0 : T - n, r % 2 ? n : T) = true;
  }
  mask[0] = false;
  mask[1] = torch::arange(T) % 3 != 1;
  return mask;
}

struct Parameters {
  Tensor weight, bias, context_weight, context_bias;
  std::vector<Tensor> all() const { return {weight, bias, context_weight, context_bias}; }
};

Parameters parameters_of(const WordAttention& m) {
  return {param(m, "mlp.weight"), param(m, "mlp.bias"), param(m, "context.weight"), param(m, "context.bias")};
}

}  // namespace

TEST_CASE("fused word attention: s, alpha and every gradient equal the TorchScript equations'", "[nn][word][fused]") {
  const int threads = GENERATE(1, 2);
  const bool masked = GENERATE(true, false);
  ThreadsGuard guard(threads);
  torch::manual_seed(21);
  const std::int64_t B = 19, T = 11, D = 20;  // D: one block of 16 and a tail of 4 in the kernel's dot products
  WordAttention portable{WordAttentionOptions(D)};
  const Parameters p = parameters_of(portable);
  const Tensor h = torch::randn({B, T, D}).requires_grad_();
  const Tensor mask = masked ? test_mask(B, T) : Tensor();
  const auto run = [&] { return word_attention(h, mask, p.weight, p.bias, p.context_weight, p.context_bias); };
  const auto [s, alpha] = run();
  const auto [s_ref, alpha_ref] = masked ? portable.forward(h, mask) : portable.forward(h);
  CHECK(max_diff(s, s_ref) < 1e-6);
  CHECK(max_diff(alpha, alpha_ref) < 1e-6);
  if (masked) {
    CHECK(alpha.masked_select(torch::logical_not(mask)).abs().max().item<float>() == 0.0f);
    CHECK(s[0].abs().max().item<float>() == 0.0f);  // no real step: s = 0, alpha = 0, no NaN
  }
  // A loss through both outputs (explain reads alpha), so the gradient of alpha is used too.
  const Tensor probe_s = torch::randn({B, D}), probe_alpha = torch::randn({B, T});
  std::vector<Tensor> inputs = p.all();
  inputs.insert(inputs.begin(), h);
  const auto g = torch::autograd::grad({(s * probe_s).sum() + (alpha * probe_alpha).sum()}, inputs);
  const auto g_ref = torch::autograd::grad({(s_ref * probe_s).sum() + (alpha_ref * probe_alpha).sum()}, inputs);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    INFO("gradient " << k << " (h, W, b, v, c)");
    CHECK(torch::allclose(g[k], g_ref[k], 1e-4, 1e-5));
  }
  // The training loss reads s only: alpha's gradient is absent.
  const auto [s2, alpha2] = run();
  const auto [s2_ref, alpha2_ref] = masked ? portable.forward(h, mask) : portable.forward(h);
  const auto g_s = torch::autograd::grad({(s2 * probe_s).sum()}, inputs);
  const auto g_s_ref = torch::autograd::grad({(s2_ref * probe_s).sum()}, inputs);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    INFO("gradient of s alone " << k);
    CHECK(torch::allclose(g_s[k], g_s_ref[k], 1e-4, 1e-5));
  }
}

TEST_CASE("fused word attention: a second backward pass through one forward pass is refused, not wrong", "[nn][word][fused]") {
  // The backward pass writes dz over the saved u.
  torch::manual_seed(24);
  WordAttention m(WordAttentionOptions(8));
  const Parameters p = parameters_of(m);
  const Tensor h = torch::randn({4, 5, 8}).requires_grad_();
  const Tensor loss = std::get<0>(word_attention(h, {}, p.weight, p.bias, p.context_weight, p.context_bias)).pow(2).sum();
  const Tensor g = torch::autograd::grad({loss}, {h}, {}, /*retain_graph=*/true)[0];
  CHECK(g.abs().sum().item<float>() > 0.0f);
  CHECK_THROWS_WITH(torch::autograd::grad({loss}, {h}), Catch::Contains("second backward pass"));
}

TEST_CASE("fused word attention: under RepeatableBackward a forward pass serves several backward passes, each exact", "[nn][word][fused]") {
  torch::manual_seed(25);
  WordAttention m(WordAttentionOptions(8));
  const Parameters p = parameters_of(m);
  const Tensor h = torch::randn({4, 5, 8}).requires_grad_();
  const Tensor probe1 = torch::randn({4, 8}), probe2 = torch::randn({4, 8});
  const auto s_of = [&] { return std::get<0>(word_attention(h, {}, p.weight, p.bias, p.context_weight, p.context_bias)); };
  const Tensor once1 = torch::autograd::grad({(s_of() * probe1).sum()}, {h})[0];
  const Tensor once2 = torch::autograd::grad({(s_of() * probe2).sum()}, {h})[0];
  const RepeatableBackward repeatable;
  const Tensor s = s_of();
  const Tensor g1 = torch::autograd::grad({(s * probe1).sum()}, {h}, {}, /*retain_graph=*/true)[0];
  const Tensor g2 = torch::autograd::grad({(s * probe2).sum()}, {h})[0];
  CHECK(torch::allclose(g1, once1, 1e-6, 1e-7));
  CHECK(torch::allclose(g2, once2, 1e-6, 1e-7));
}

TEST_CASE("fused word attention: the same bits on one thread and two", "[nn][word][fused]") {
  torch::manual_seed(22);
  WordAttention m(WordAttentionOptions(24));
  const Parameters p = parameters_of(m);
  const Tensor h = torch::randn({40, 17, 24}).requires_grad_();
  const Tensor mask = test_mask(40, 17);
  std::vector<std::vector<Tensor>> results;
  for (int threads : {1, 2}) {
    ThreadsGuard guard(threads);
    const auto [s, alpha] = word_attention(h, mask, p.weight, p.bias, p.context_weight, p.context_bias);
    auto grads = torch::autograd::grad({s.sum() + alpha.pow(2).sum()}, {h, p.weight, p.bias, p.context_weight, p.context_bias});
    grads.push_back(s.detach());
    grads.push_back(alpha.detach());
    results.push_back(grads);
  }
  for (std::size_t k = 0; k < results[0].size(); ++k) {
    INFO("result " << k);
    CHECK(torch::equal(results[0][k], results[1][k]));
  }
}

TEST_CASE("fused word attention: the native module runs it, with the portable module's parameters", "[nn][word][fused]") {
  torch::manual_seed(23);
  WordAttention portable(WordAttentionOptions(8));
  WordAttention native(WordAttentionOptions(8).runtime(Runtime::kNative));
  for (const auto& [name, value] : portable.named_parameters()) {
    torch::NoGradGuard no_grad;
    param(native, name).copy_(value);
  }
  const Tensor h = torch::randn({6, 9, 8});
  const Tensor mask = test_mask(6, 9);
  const auto [s, alpha] = native.forward(h, mask);
  const auto [s_ref, alpha_ref] = portable.forward(h, mask);
  CHECK(max_diff(s, s_ref) < 1e-6);
  CHECK(max_diff(alpha, alpha_ref) < 1e-6);
  CHECK(native.module().get_method("forward").graph()->toString().find("attn::word_attention") != std::string::npos);
  // combine=false returns the weighted sequence, which the kernel does not: the operators run.
  WordAttention sequence(WordAttentionOptions(8).combine(false).runtime(Runtime::kNative));
  CHECK(std::get<0>(sequence.forward(h, mask)).sizes() == torch::IntArrayRef({6, 9, 8}));
}

TEST_CASE("fused word attention: inputs of the wrong shape or type are errors", "[nn][word][fused]") {
  WordAttention m(WordAttentionOptions(8));
  const Parameters p = parameters_of(m);
  CHECK_THROWS_WITH(word_attention(torch::randn({2, 3, 7}), {}, p.weight, p.bias, p.context_weight, p.context_bias),
                    Catch::Contains("parameters of another size"));
  CHECK_THROWS_WITH(word_attention(torch::randn({2, 3, 8}), torch::ones({2, 4}), p.weight, p.bias, p.context_weight, p.context_bias),
                    Catch::Contains("mask must be [B, T]"));
  CHECK_THROWS_WITH(word_attention(torch::randn({2, 3, 8}, torch::kDouble), {}, p.weight, p.bias, p.context_weight, p.context_bias),
                    Catch::Contains("float32"));
}
