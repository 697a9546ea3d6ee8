#include <cstdio>
#include <filesystem>

#include "attn/nn/attention.h"
#include "nn_test_util.h"

using namespace attn::nn;
using namespace nn_test;

namespace {

Tensor lengths_mask(std::vector<std::int64_t> lengths, std::int64_t T) {
  const auto n = static_cast<std::int64_t>(lengths.size());
  return torch::arange(T).unsqueeze(0).expand({n, T}) < torch::tensor(lengths).unsqueeze(1);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("attn_nn_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

// ---- WordAttention ----

TEST_CASE("WordAttention: shapes, values against the equations, masks", "[nn][word]") {
  torch::manual_seed(1);
  WordAttention att(WordAttentionOptions(4));
  const Tensor h = torch::randn({3, 5, 4});
  const Tensor mask = lengths_mask({5, 2, 0}, 5);
  auto [s, alpha] = att.forward(h, mask);
  REQUIRE(s.sizes() == torch::IntArrayRef({3, 4}));
  REQUIRE(alpha.sizes() == torch::IntArrayRef({3, 5}));

  // u = tanh(W h + b), scores = v^T u + c, alpha = masked softmax, s = sum alpha h
  const Tensor u = torch::tanh(torch::matmul(h, param(att, "mlp.weight").t()) + param(att, "mlp.bias"));
  const Tensor scores = torch::matmul(u, param(att, "context.weight").t()).squeeze(-1) + param(att, "context.bias");
  Tensor expected_alpha = reference_masked_softmax(scores, mask);
  expected_alpha = torch::nan_to_num(expected_alpha, 0.0);  // the fully masked row: 0/0
  CHECK(max_diff(alpha, expected_alpha) < 1e-6);
  CHECK(max_diff(s, (h * expected_alpha.unsqueeze(-1)).sum(1)) < 1e-6);

  // masked positions exactly 0, rows sum to 1, the fully masked row is zeros and no NaN
  CHECK(alpha[1].slice(0, 2).abs().max().item<float>() == 0.0f);
  CHECK(alpha[0].sum().item<float>() == Approx(1.0f).epsilon(1e-6));
  CHECK(alpha[1].sum().item<float>() == Approx(1.0f).epsilon(1e-6));
  CHECK(alpha[2].abs().max().item<float>() == 0.0f);
  CHECK(s[2].abs().max().item<float>() == 0.0f);
  CHECK_FALSE(torch::isnan(s).any().item<bool>());

  // without a mask every position counts
  auto [s_all, alpha_all] = att.forward(h);
  CHECK(max_diff(alpha_all, torch::softmax(scores, -1)) < 1e-6);

  // combine=false returns the weighted sequence
  WordAttention seq(WordAttentionOptions(4).combine(false));
  auto [weighted, a2] = seq.forward(h, mask);
  CHECK(weighted.sizes() == torch::IntArrayRef({3, 5, 4}));
  CHECK(max_diff(weighted, h * a2.unsqueeze(-1)) < 1e-7);
}

TEST_CASE("WordAttention: gradients match finite differences, also through masks", "[nn][word][grad]") {
  torch::manual_seed(2);
  WordAttention att(WordAttentionOptions(3));
  att.to(torch::kDouble);
  const Tensor h = torch::randn({2, 4, 3}, torch::kDouble).requires_grad_(true);
  const Tensor mask = lengths_mask({3, 0}, 4);
  auto loss = [&] {
    auto [s, alpha] = att.forward(h, mask);
    return probe_sum(s, 7) + probe_sum(alpha, 8);
  };
  std::vector<Tensor> wrt = att.parameters();
  wrt.push_back(h);
  check_gradients(loss, wrt);
  for (const Tensor& g : torch::autograd::grad({loss()}, wrt)) CHECK_FALSE(torch::isnan(g).any().item<bool>());
}

TEST_CASE("WordAttention: TorchScript file round trip", "[nn][word][script]") {
  WordAttention att(WordAttentionOptions(6));
  const std::string path = temp_path("word.pt");
  att.save(path);
  WordAttention loaded(torch::jit::load(path));
  std::remove(path.c_str());
  const Tensor h = torch::randn({2, 7, 6});
  const Tensor mask = lengths_mask({7, 3}, 7);
  auto [a, wa] = att.forward(h, mask);
  auto [b, wb] = loaded.forward(h, mask);
  CHECK(max_diff(a, b) == 0.0);
  CHECK(max_diff(wa, wb) == 0.0);
  std::vector<std::string> names;
  for (const auto& [n, t] : loaded.named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"mlp.weight", "mlp.bias", "context.weight", "context.bias"});
}

// ---- FeatureAttention ----

TEST_CASE("FeatureAttention: alpha = softmax(Wx + b), output alpha * x", "[nn][feature]") {
  torch::manual_seed(3);
  FeatureAttention att(10);
  const Tensor x = torch::randn({4, 10});
  auto [out, alpha] = att.forward(x);
  const Tensor expected = torch::softmax(torch::matmul(x, param(att, "attention.weight").t()) + param(att, "attention.bias"), -1);
  CHECK(max_diff(alpha, expected) < 1e-6);
  CHECK(max_diff(out, expected * x) < 1e-6);
  CHECK(max_diff(alpha.sum(-1), torch::ones({4})) < 1e-6);
  std::int64_t n = 0;
  for (const auto& p : att.parameters()) n += p.numel();
  CHECK(n == 110);  // the seed's attention_vector layer

  const Tensor mask = torch::tensor({1, 1, 0, 1, 0, 1, 1, 1, 1, 1}, torch::kBool).expand({4, 10});
  auto [out_m, alpha_m] = att.forward(x, mask);
  CHECK(alpha_m.index({torch::indexing::Slice(), 2}).abs().max().item<float>() == 0.0f);
  CHECK(max_diff(alpha_m.sum(-1), torch::ones({4})) < 1e-6);

  att.to(torch::kDouble);
  const Tensor xd = torch::randn({3, 10}, torch::kDouble).requires_grad_(true);
  std::vector<Tensor> wrt = att.parameters();
  wrt.push_back(xd);
  check_gradients(
      [&] {
        auto [o, a] = att.forward(xd);
        return probe_sum(o, 1) + probe_sum(a, 2);
      },
      wrt);
}

// ---- QueryKeyAttention ----

TEST_CASE("QueryKeyAttention: every score against its formula", "[nn][qk]") {
  torch::manual_seed(4);
  const std::int64_t B = 2, Tk = 5, D = 4;
  const Tensor q = torch::randn({B, D});
  const Tensor k = torch::randn({B, Tk, D});
  const Tensor mask = lengths_mask({5, 3}, Tk);
  for (const char* name : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) {
    INFO(name);
    QueryKeyAttention att(QueryKeyAttentionOptions(D, D).score(parse_score(name)).max_length(8).attention_dim(6));
    auto [context, alpha] = att.forward(q, k, mask);
    REQUIRE(context.sizes() == torch::IntArrayRef({B, D}));
    REQUIRE(alpha.sizes() == torch::IntArrayRef({B, Tk}));
    Tensor scores;  // [B, Tk], written out per score
    const std::string s = name;
    if (s == "additive") {
      const Tensor wq = torch::matmul(q, param(att, "query_proj.weight").t()).unsqueeze(1);  // [B, 1, A]
      const Tensor uk = torch::matmul(k, param(att, "key_proj.weight").t());                 // [B, Tk, A]
      scores = torch::matmul(torch::tanh(wq + uk), param(att, "v.weight").t()).squeeze(-1);
    } else if (s == "general") {
      scores = (q.unsqueeze(1) * torch::matmul(k, param(att, "W.weight").t())).sum(-1);
    } else if (s == "dot") {
      scores = (q.unsqueeze(1) * k).sum(-1);
    } else if (s == "scaled-dot") {
      scores = (q.unsqueeze(1) * k).sum(-1) / 2.0;  // sqrt(4)
    } else if (s == "cosine") {
      scores = (q.unsqueeze(1) * k).sum(-1) / (q.norm(2, -1, true) * k.norm(2, -1));
    } else {
      scores = torch::matmul(q, param(att, "location.weight").t()).slice(1, 0, Tk);
    }
    const Tensor expected = reference_masked_softmax(scores, mask);
    CHECK(max_diff(alpha, expected) < 1e-6);
    CHECK(max_diff(context, torch::bmm(expected.unsqueeze(1), k).squeeze(1)) < 1e-6);
    CHECK(alpha[1].slice(0, 3).abs().max().item<float>() == 0.0f);

    // all decoder steps at once: [B, Tq, Dq] gives [B, Tq, Tk]
    auto [c3, a3] = att.forward(torch::stack({q, q, q}, 1), k, mask);
    CHECK(a3.sizes() == torch::IntArrayRef({B, 3, Tk}));
    CHECK(max_diff(a3.select(1, 2), alpha) < 1e-6);
  }
}

TEST_CASE("QueryKeyAttention: gradients for every score", "[nn][qk][grad]") {
  for (const char* name : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) {
    INFO(name);
    torch::manual_seed(5);
    QueryKeyAttention att(QueryKeyAttentionOptions(3, 3).score(parse_score(name)).max_length(4));
    att.to(torch::kDouble);
    const Tensor q = torch::randn({2, 3}, torch::kDouble).requires_grad_(true);
    const Tensor k = torch::randn({2, 4, 3}, torch::kDouble).requires_grad_(true);
    const Tensor mask = lengths_mask({4, 2}, 4);
    std::vector<Tensor> wrt = att.parameters();
    wrt.push_back(q);
    wrt.push_back(k);
    check_gradients(
        [&] {
          auto [c, a] = att.forward(q, k, mask);
          return probe_sum(c, 3) + probe_sum(a, 4);
        },
        wrt);
  }
}

TEST_CASE("QueryKeyAttention: bad names and sizes are clear errors", "[nn][qk]") {
  CHECK_THROWS_WITH(parse_score("bilinear"), Catch::Contains("unknown attention score 'bilinear'") &&
                                                 Catch::Contains("additive, general, dot, scaled-dot, cosine, location"));
  CHECK_THROWS_WITH(QueryKeyAttention(QueryKeyAttentionOptions(3, 4).score(Score::kDot)), Catch::Contains("must be equal"));
  QueryKeyAttention loc(QueryKeyAttentionOptions(3, 3).score(Score::kLocation).max_length(4));
  CHECK_THROWS_WITH(loc.forward(torch::randn({1, 3}), torch::randn({1, 6, 3})), Catch::Contains("max_length"));
}

// ---- LuongOutput ----

TEST_CASE("LuongOutput: h~ = tanh(W_c [c, q])", "[nn][luong]") {
  torch::manual_seed(6);
  LuongOutput out(4, 3, 5);
  const Tensor c = torch::randn({2, 4}), q = torch::randn({2, 3});
  const Tensor expected = torch::tanh(torch::matmul(torch::cat({c, q}, -1), param(out, "combine.weight").t()));
  CHECK(max_diff(out.forward(c, q), expected) < 1e-6);
}

// ---- Scaled dot-product and multi-head attention ----

TEST_CASE("ScaledDotProductAttention: softmax(QK^T/sqrt(d))V, masks, dropout only in training", "[nn][sdpa]") {
  torch::manual_seed(7);
  ScaledDotProductAttention att(0.5);
  const Tensor q = torch::randn({2, 3, 4}), k = torch::randn({2, 5, 4}), v = torch::randn({2, 5, 6});
  const Tensor mask = lengths_mask({5, 4}, 5).unsqueeze(1);  // [B, 1, Tk]
  att.eval();
  auto [out, w] = att.forward(q, k, v, mask);
  const Tensor expected_w = reference_masked_softmax(torch::matmul(q, k.transpose(1, 2)) / 2.0, mask);
  CHECK(max_diff(w, expected_w) < 1e-6);
  CHECK(max_diff(out, torch::matmul(expected_w, v)) < 1e-6);
  att.train();
  auto [out_t, w_t] = att.forward(q, k, v, mask);
  const double zeros = (w_t == 0).logical_and(expected_w != 0).sum().item<double>();
  CHECK(zeros > 0);  // some weights dropped
  CHECK(max_diff(w_t * (w_t != 0), w_t) == 0.0);
}

TEST_CASE("MultiHeadAttention equals torch::nn::MultiheadAttention with the same weights", "[nn][mha]") {
  torch::manual_seed(8);
  const std::int64_t B = 2, T = 5, S = 6, E = 8, H = 2;
  MultiHeadAttention ours(MultiHeadAttentionOptions(E, H));
  torch::nn::MultiheadAttention ref(torch::nn::MultiheadAttentionOptions(E, H));
  ref->eval();
  ours.eval();
  const Tensor w = ref->in_proj_weight, b = ref->in_proj_bias;
  set_param(ours, "q_proj.weight", w.slice(0, 0, E));
  set_param(ours, "k_proj.weight", w.slice(0, E, 2 * E));
  set_param(ours, "v_proj.weight", w.slice(0, 2 * E, 3 * E));
  set_param(ours, "q_proj.bias", b.slice(0, 0, E));
  set_param(ours, "k_proj.bias", b.slice(0, E, 2 * E));
  set_param(ours, "v_proj.bias", b.slice(0, 2 * E, 3 * E));
  set_param(ours, "out_proj.weight", ref->out_proj->weight);
  set_param(ours, "out_proj.bias", ref->out_proj->bias);

  const Tensor query = torch::randn({B, T, E}), memory = torch::randn({B, S, E});
  const Tensor key_mask = lengths_mask({6, 3}, S);
  auto [out, weights] = ours.forward(query, memory, memory, key_mask);
  // torch: sequence-first, key_padding_mask true = ignore, weights averaged over heads
  auto [ref_out, ref_w] = ref->forward(query.transpose(0, 1), memory.transpose(0, 1), memory.transpose(0, 1), key_mask.logical_not());
  CHECK(weights.sizes() == torch::IntArrayRef({B, H, T, S}));
  CHECK(max_diff(out, ref_out.transpose(0, 1)) < 1e-5);
  CHECK(max_diff(weights.mean(1), ref_w) < 1e-6);

  // causal self-attention equals torch with an upper-triangular -inf attn_mask
  auto [c_out, c_w] = ours.forward(query, query, query, {}, /*causal=*/true);
  // (LibTorch 1.13's C++ MultiheadAttention adds attn_mask: a float mask with -inf above the diagonal)
  const Tensor causal = torch::zeros({T, T}).masked_fill(torch::ones({T, T}, torch::kBool).triu(1), -INFINITY);
  auto [rc_out, rc_w] = ref->forward(query.transpose(0, 1), query.transpose(0, 1), query.transpose(0, 1), {}, true, causal);
  CHECK(max_diff(c_out, rc_out.transpose(0, 1)) < 1e-5);
  CHECK(c_w.index({0, 0, 1, 2}).item<float>() == 0.0f);
}

TEST_CASE("MultiHeadAttention: gradients and TorchScript round trip", "[nn][mha][grad]") {
  torch::manual_seed(9);
  MultiHeadAttention att(MultiHeadAttentionOptions(4, 2));
  const std::string path = temp_path("mha.pt");
  att.save(path);
  MultiHeadAttention loaded(torch::jit::load(path));
  std::remove(path.c_str());
  const Tensor x = torch::randn({2, 3, 4});
  const Tensor mask = lengths_mask({3, 1}, 3);
  CHECK(max_diff(std::get<0>(att.forward(x, x, x, mask, true)), std::get<0>(loaded.forward(x, x, x, mask, true))) == 0.0);

  att.to(torch::kDouble);
  const Tensor xd = torch::randn({2, 3, 4}, torch::kDouble).requires_grad_(true);
  std::vector<Tensor> wrt = att.parameters();
  wrt.push_back(xd);
  check_gradients(
      [&] {
        auto [o, w] = att.forward(xd, xd, xd, mask, true);
        return probe_sum(o, 5) + probe_sum(w, 6);
      },
      wrt);
}

TEST_CASE("Fully masked rows give zero weights and no NaN, in values and gradients", "[nn][mask]") {
  torch::manual_seed(14);
  MultiHeadAttention mha(MultiHeadAttentionOptions(4, 2));
  QueryKeyAttention qk(QueryKeyAttentionOptions(4, 4).score(Score::kAdditive));
  const Tensor x = torch::randn({2, 3, 4}).requires_grad_(true);
  const Tensor none = torch::zeros({2, 3}, torch::kBool);
  auto [out, w] = mha.forward(x, x, x, none);
  CHECK(w.abs().max().item<float>() == 0.0f);
  auto [c, a] = qk.forward(x.select(1, 0), x, none);
  CHECK(a.abs().max().item<float>() == 0.0f);
  CHECK(c.abs().max().item<float>() == 0.0f);
  const Tensor loss = out.sum() + c.sum();
  std::vector<Tensor> wrt = mha.parameters();
  for (const Tensor& p : qk.parameters()) wrt.push_back(p);
  wrt.push_back(x);
  for (const Tensor& g : torch::autograd::grad({loss}, wrt, {}, {}, false, /*allow_unused=*/true))
    if (g.defined()) CHECK_FALSE(torch::isnan(g).any().item<bool>());
}

TEST_CASE("LuongOutput and ScaledDotProductAttention: gradients", "[nn][grad]") {
  torch::manual_seed(15);
  LuongOutput luong(3, 2, 4);
  luong.to(torch::kDouble);
  const Tensor c = torch::randn({2, 3}, torch::kDouble).requires_grad_(true);
  const Tensor q = torch::randn({2, 2}, torch::kDouble).requires_grad_(true);
  std::vector<Tensor> wrt = luong.parameters();
  wrt.push_back(c);
  wrt.push_back(q);
  check_gradients([&] { return probe_sum(luong.forward(c, q), 1); }, wrt);

  ScaledDotProductAttention sdpa;
  const Tensor qq = torch::randn({2, 3, 4}, torch::kDouble).requires_grad_(true);
  const Tensor k = torch::randn({2, 5, 4}, torch::kDouble).requires_grad_(true);
  const Tensor v = torch::randn({2, 5, 3}, torch::kDouble).requires_grad_(true);
  const Tensor mask = lengths_mask({5, 2}, 5).unsqueeze(1);
  check_gradients(
      [&] {
        auto [o, w] = sdpa.forward(qq, k, v, mask);
        return probe_sum(o, 2) + probe_sum(w, 3);
      },
      {qq, k, v});
}
