#include "attn/nn/transformer.h"
#include "nn_test_util.h"

using namespace attn::nn;
using namespace nn_test;

namespace {

/// Copies torch::nn MultiheadAttention weights into ours, under `prefix` ("self_attn.", ...).
void copy_mha(const ScriptModule& ours, const std::string& prefix, torch::nn::MultiheadAttention& ref, std::int64_t E) {
  const Tensor w = ref->in_proj_weight, b = ref->in_proj_bias;
  const char* names[] = {"q_proj", "k_proj", "v_proj"};
  for (int i = 0; i < 3; ++i) {
    set_param(ours, prefix + names[i] + ".weight", w.slice(0, i * E, (i + 1) * E));
    set_param(ours, prefix + names[i] + ".bias", b.slice(0, i * E, (i + 1) * E));
  }
  set_param(ours, prefix + "out_proj.weight", ref->out_proj->weight);
  set_param(ours, prefix + "out_proj.bias", ref->out_proj->bias);
}

void copy_linear(const ScriptModule& ours, const std::string& name, torch::nn::Linear& ref) {
  set_param(ours, name + ".weight", ref->weight);
  set_param(ours, name + ".bias", ref->bias);
}

void copy_norm(const ScriptModule& ours, const std::string& name, torch::nn::LayerNorm& ref) {
  set_param(ours, name + ".weight", ref->weight);
  set_param(ours, name + ".bias", ref->bias);
}

}  // namespace

TEST_CASE("PositionalEncoding: sin on even, cos on odd dimensions", "[nn][pe]") {
  PositionalEncoding pe(6, 50);
  const Tensor zeros = torch::zeros({1, 10, 6});
  const Tensor out = pe.forward(zeros);
  CHECK(out[0][0][0].item<float>() == 0.0f);  // sin(0)
  CHECK(out[0][0][1].item<float>() == 1.0f);  // cos(0)
  CHECK(out[0][3][2].item<float>() == Approx(std::sin(3.0 / std::pow(10000.0, 2.0 / 6))));
  CHECK(out[0][7][5].item<float>() == Approx(std::cos(7.0 / std::pow(10000.0, 4.0 / 6))));
  CHECK(pe.parameters().empty());
}

TEST_CASE("TransformerEncoderLayer equals torch::nn::TransformerEncoderLayer with the same weights", "[nn][encoder]") {
  torch::manual_seed(10);
  const std::int64_t B = 2, T = 5, E = 8, H = 2, F = 16;
  TransformerEncoderLayer ours(TransformerLayerOptions(E, H).dim_feedforward(F).dropout(0.0));
  torch::nn::TransformerEncoderLayer ref(torch::nn::TransformerEncoderLayerOptions(E, H).dim_feedforward(F).dropout(0.0));
  ref->eval();
  ours.eval();
  copy_mha(ours, "self_attn.", ref->self_attn, E);
  copy_linear(ours, "linear1", ref->linear1);
  copy_linear(ours, "linear2", ref->linear2);
  copy_norm(ours, "norm1", ref->norm1);
  copy_norm(ours, "norm2", ref->norm2);
  const Tensor x = torch::randn({B, T, E});
  const Tensor mask = torch::arange(T).unsqueeze(0) < torch::tensor({5, 3}).unsqueeze(1);
  auto [y, w] = ours.forward(x, mask);
  const Tensor expected = ref->forward(x.transpose(0, 1), {}, mask.logical_not()).transpose(0, 1);
  CHECK(max_diff(y, expected) < 1e-5);
  CHECK(w.sizes() == torch::IntArrayRef({B, H, T, T}));
}

TEST_CASE("TransformerEncoderLayer pre-norm: x + SA(LN(x)), then x + FFN(LN(x))", "[nn][encoder]") {
  torch::manual_seed(11);
  const std::int64_t E = 4;
  TransformerEncoderLayer ours(TransformerLayerOptions(E, 2).dim_feedforward(6).dropout(0.0).norm_first(true));
  ours.eval();
  MultiHeadAttention sa(ours.module().attr("self_attn").toModule());
  const Tensor x = torch::randn({2, 3, E});
  auto ln = [&](const Tensor& t, const std::string& n) {
    return torch::layer_norm(t, {E}, param(ours, n + ".weight"), param(ours, n + ".bias"));
  };
  const Tensor h = ln(x, "norm1");
  const Tensor x1 = x + std::get<0>(sa.forward(h, h, h));
  const Tensor ff = torch::linear(torch::relu(torch::linear(ln(x1, "norm2"), param(ours, "linear1.weight"), param(ours, "linear1.bias"))),
                                  param(ours, "linear2.weight"), param(ours, "linear2.bias"));
  CHECK(max_diff(std::get<0>(ours.forward(x)), x1 + ff) < 1e-6);
}

TEST_CASE("TransformerDecoderLayer equals torch::nn::TransformerDecoderLayer with a causal mask", "[nn][decoder]") {
  torch::manual_seed(12);
  const std::int64_t B = 2, T = 4, S = 6, E = 8, H = 2, F = 16;
  TransformerDecoderLayer ours(TransformerLayerOptions(E, H).dim_feedforward(F).dropout(0.0));
  torch::nn::TransformerDecoderLayer ref(torch::nn::TransformerDecoderLayerOptions(E, H).dim_feedforward(F).dropout(0.0));
  ref->eval();
  ours.eval();
  copy_mha(ours, "self_attn.", ref->self_attn, E);
  copy_mha(ours, "cross_attn.", ref->multihead_attn, E);
  copy_linear(ours, "linear1", ref->linear1);
  copy_linear(ours, "linear2", ref->linear2);
  copy_norm(ours, "norm1", ref->norm1);
  copy_norm(ours, "norm2", ref->norm2);
  copy_norm(ours, "norm3", ref->norm3);
  const Tensor x = torch::randn({B, T, E}), memory = torch::randn({B, S, E});
  const Tensor memory_mask = torch::arange(S).unsqueeze(0) < torch::tensor({6, 2}).unsqueeze(1);
  auto [y, self_w, cross_w] = ours.forward(x, memory, {}, memory_mask);
  const Tensor causal = torch::zeros({T, T}).masked_fill(torch::ones({T, T}, torch::kBool).triu(1), -INFINITY);
  const Tensor expected =
      ref->forward(x.transpose(0, 1), memory.transpose(0, 1), causal, {}, {}, memory_mask.logical_not()).transpose(0, 1);
  CHECK(max_diff(y, expected) < 1e-5);
  CHECK(self_w.sizes() == torch::IntArrayRef({B, H, T, T}));
  CHECK(cross_w.sizes() == torch::IntArrayRef({B, H, T, S}));
  CHECK(self_w.index({0, 0, 0, 1}).item<float>() == 0.0f);   // causal
  CHECK(cross_w.index({1, 0, 0, 3}).item<float>() == 0.0f);  // padded memory
}

TEST_CASE("Transformer layers: gradients in double precision", "[nn][grad]") {
  torch::manual_seed(13);
  TransformerDecoderLayer dec(TransformerLayerOptions(4, 2).dim_feedforward(5).dropout(0.0).norm_first(true));
  dec.to(torch::kDouble);
  const Tensor x = torch::randn({1, 3, 4}, torch::kDouble).requires_grad_(true);
  const Tensor m = torch::randn({1, 2, 4}, torch::kDouble).requires_grad_(true);
  std::vector<Tensor> wrt = dec.parameters();
  wrt.push_back(x);
  wrt.push_back(m);
  check_gradients([&] { return probe_sum(std::get<0>(dec.forward(x, m)), 9); }, wrt, 1e-6, 1e-5);

  TransformerEncoderLayer enc(TransformerLayerOptions(4, 2).dim_feedforward(5).dropout(0.0));
  enc.to(torch::kDouble);
  const Tensor mask = torch::tensor({{true, true, false}});
  std::vector<Tensor> enc_wrt = enc.parameters();
  enc_wrt.push_back(x);
  check_gradients(
      [&] {
        auto [y, w] = enc.forward(x, mask);
        return probe_sum(y, 10) + probe_sum(w, 11);
      },
      enc_wrt, 1e-6, 1e-5);
}
