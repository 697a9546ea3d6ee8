// The recurrent layers: the BiLSTM's length-aware variants against torch::nn's packed LSTM, and the
// LSTM cell's parameters.
#include "attn/nn/recurrent.h"
#include "nn_test_util.h"

using namespace attn::nn;
using torch::Tensor;

TEST_CASE("BiLSTM forward_lengths equals torch::nn::LSTM on packed sequences, in both builds", "[nn][lstm]") {
  const Runtime runtime = GENERATE(Runtime::kPortable, Runtime::kNative);
  torch::manual_seed(4);
  torch::jit::Module m = script::bilstm(3, 5, 0.0, runtime);
  m.eval();
  torch::nn::LSTM reference(torch::nn::LSTMOptions(3, 5).bidirectional(true).batch_first(true));
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : reference->named_parameters()) p.value().copy_(m.attr(p.key()).toTensor());
  }
  const Tensor x = torch::randn({3, 6, 3});
  const Tensor lengths = torch::tensor({6, 2, 4}, torch::kInt64);
  const Tensor ours = m.get_method("forward_lengths")({x, lengths}).toTensor();
  namespace rnn = torch::nn::utils::rnn;
  const auto packed = rnn::pack_padded_sequence(x, lengths, /*batch_first=*/true, /*enforce_sorted=*/false);
  const Tensor expected = std::get<0>(rnn::pad_packed_sequence(std::get<0>(reference->forward_with_packed_input(packed)), true));
  for (int b = 0; b < 3; ++b) {
    const auto n = lengths[b].item<std::int64_t>();
    CHECK(torch::allclose(ours[b].slice(0, 0, n), expected[b].slice(0, 0, n), 1e-5, 1e-6));
  }
  // Unpadded rows: the same as the plain bidirectional forward.
  CHECK(torch::allclose(ours[0], m.forward({x.slice(0, 0, 1)}).toTensor()[0], 1e-5, 1e-6));
  // Pre-padding (row 1's 2 real steps at the end): forward_masked gives the same real-step outputs.
  Tensor pre = torch::zeros_like(x);
  pre[1].slice(0, 4, 6).copy_(x[1].slice(0, 0, 2));
  const Tensor mask = torch::tensor({0, 0, 0, 0, 1, 1}, torch::kInt64).unsqueeze(0) != 0;
  const Tensor masked = m.get_method("forward_masked")({pre[1].unsqueeze(0), mask}).toTensor();
  CHECK(torch::allclose(masked[0].slice(0, 4, 6), expected[1].slice(0, 0, 2), 1e-5, 1e-6));
  CHECK(masked[0].slice(0, 0, 4).abs().sum().item<float>() == 0.0f);
}

TEST_CASE("LSTM cell: torch.nn.LSTMCell's parameter names and shapes", "[nn][lstm]") {
  const torch::jit::Module m = script::lstm_cell(4, 3);
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& p : m.named_parameters(true)) shapes[p.name] = p.value.sizes().vec();
  CHECK(shapes == std::map<std::string, std::vector<std::int64_t>>{
                      {"weight_ih", {12, 4}}, {"weight_hh", {12, 3}}, {"bias_ih", {12}}, {"bias_hh", {12}}});
  torch::nn::LSTMCell reference(torch::nn::LSTMCellOptions(4, 3));
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : reference->named_parameters()) p.value().copy_(m.attr(p.key()).toTensor());
  }
  const Tensor x = torch::randn({2, 4}), h = torch::randn({2, 3}), c = torch::randn({2, 3});
  const auto ours = torch::lstm_cell(x, {h, c}, m.attr("weight_ih").toTensor(), m.attr("weight_hh").toTensor(),
                                     m.attr("bias_ih").toTensor(), m.attr("bias_hh").toTensor());
  const auto expected = reference->forward(x, std::make_tuple(h, c));
  CHECK(torch::allclose(std::get<0>(ours), std::get<0>(expected), 1e-5, 1e-6));
  CHECK(torch::allclose(std::get<1>(ours), std::get<1>(expected), 1e-5, 1e-6));
}
