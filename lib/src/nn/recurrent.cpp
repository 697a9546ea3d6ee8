// The recurrent layers: a bidirectional LSTM on LibTorch's fused kernel (with variants that read only
// a row's real steps) and the LSTM cell a decoder steps through.
#include "attn/nn/recurrent.h"

#include <cmath>

#include <torch/script.h>

#include "attn/nn/fused_gru.h"
#include "attn/nn/fused_lstm.h"

namespace attn::nn::script {
namespace {

/// forward_lengths and forward_masked on attn's kernel (fused_lstm.h).
const char* kNativeSource = R"(
def forward_lengths(self, x: Tensor, lengths: Tensor) -> Tensor:
    steps = torch.arange(x.size(1), device=x.device).unsqueeze(0)
    return self.forward_masked(x, steps < lengths.unsqueeze(1))

def forward_masked(self, x: Tensor, mask: Tensor) -> Tensor:
    w_hh = torch.dropout(self.weight_hh_l0, self.recurrent_dropout, self.training)
    w_hh_reverse = torch.dropout(self.weight_hh_l0_reverse, self.recurrent_dropout, self.training)
    return attn.bilstm_masked(x, mask, self.weight_ih_l0, w_hh, self.bias_ih_l0, self.bias_hh_l0,
                              self.weight_ih_l0_reverse, w_hh_reverse, self.bias_ih_l0_reverse, self.bias_hh_l0_reverse)
)";

// The BiLSTM's forward(x): every step, on torch.lstm.
const char* kBilstmForward = R"(
def forward(self, x: Tensor) -> Tensor:
    # x [B, T, I] -> [B, T, 2H]; DropConnect on the recurrent weights while training
    w_hh = torch.dropout(self.weight_hh_l0, self.recurrent_dropout, self.training)
    w_hh_reverse = torch.dropout(self.weight_hh_l0_reverse, self.recurrent_dropout, self.training)
    params = [self.weight_ih_l0, w_hh, self.bias_ih_l0, self.bias_hh_l0,
              self.weight_ih_l0_reverse, w_hh_reverse, self.bias_ih_l0_reverse, self.bias_hh_l0_reverse]
    h0 = torch.zeros([2, x.size(0), self.hidden_size], dtype=x.dtype, device=x.device)
    out, h_n, c_n = torch.lstm(x, [h0, h0], params, True, 1, 0.0, self.training, True, True)
    return out
)";

// Its forward_lengths and forward_masked on torch.lstm (Runtime::kTorch; kNativeSource: the fused kernel's).
const char* kBilstmLengths = R"(
def forward_lengths(self, x: Tensor, lengths: Tensor) -> Tensor:
    # post-padded x [B, T, I] whose row b is real on its first lengths[b] steps -> [B, T, 2H].
    # Each direction reads a row's real steps before its padding (the backward one reads them
    # reversed), so the outputs at real steps do not depend on the padding after them, as with
    # pack_padded_sequence, but on the fused kernel.
    w_hh = torch.dropout(self.weight_hh_l0, self.recurrent_dropout, self.training)
    w_hh_reverse = torch.dropout(self.weight_hh_l0_reverse, self.recurrent_dropout, self.training)
    h0 = torch.zeros([1, x.size(0), self.hidden_size], dtype=x.dtype, device=x.device)
    forward, h_n, c_n = torch.lstm(x, [h0, h0], [self.weight_ih_l0, w_hh, self.bias_ih_l0, self.bias_hh_l0],
                                   True, 1, 0.0, self.training, False, True)
    steps = torch.arange(x.size(1), device=x.device).unsqueeze(0)     # [1, T]
    n = lengths.unsqueeze(1)                                          # [B, 1]
    reverse = torch.where(steps < n, n - 1 - steps, steps)            # row-wise reversal of the real steps
    x_reversed = x.gather(1, reverse.unsqueeze(-1).expand(-1, -1, x.size(2)))
    backward, h_n, c_n = torch.lstm(x_reversed, [h0, h0], [self.weight_ih_l0_reverse, w_hh_reverse,
                                    self.bias_ih_l0_reverse, self.bias_hh_l0_reverse],
                                    True, 1, 0.0, self.training, False, True)
    backward = backward.gather(1, reverse.unsqueeze(-1).expand(-1, -1, self.hidden_size))
    return torch.cat([forward, backward], -1)

def forward_masked(self, x: Tensor, mask: Tensor) -> Tensor:
    # x [B, T, I], mask [B, T] true on the real steps, wherever the padding is (pre or post)
    # -> [B, T, 2H], zeros at padding. The real steps, in order, go first (a stable sort), run
    # through forward_lengths, and are put back.
    _, order = torch.sort(mask.to(x.dtype), stable=True, dim=1, descending=True)
    x_sorted = x.gather(1, order.unsqueeze(-1).expand(-1, -1, x.size(2)))
    h_sorted = self.forward_lengths(x_sorted, mask.sum(1))
    back = torch.argsort(order, dim=1)
    h = h_sorted.gather(1, back.unsqueeze(-1).expand(-1, -1, h_sorted.size(2)))
    return h * mask.unsqueeze(-1).to(h.dtype)
)";

}  // namespace

torch::jit::Module bilstm(std::int64_t input_size, std::int64_t hidden_size, double recurrent_dropout, Runtime runtime) {
  require_config(recurrent_dropout >= 0 && recurrent_dropout < 1, "BiLSTM: recurrent_dropout must be in [0, 1)");
  auto m = new_module(runtime == Runtime::kNative ? "BiLSTMNative" : "BiLSTM");
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));  // torch.nn.LSTM's init
  torch::NoGradGuard no_grad;
  for (const char* suffix : {"_l0", "_l0_reverse"}) {
    const std::string s = suffix;
    add_parameter(m, "weight_ih" + s, torch::empty({4 * hidden_size, input_size}).uniform_(-bound, bound));
    add_parameter(m, "weight_hh" + s, torch::empty({4 * hidden_size, hidden_size}).uniform_(-bound, bound));
    add_parameter(m, "bias_ih" + s, torch::empty({4 * hidden_size}).uniform_(-bound, bound));
    add_parameter(m, "bias_hh" + s, torch::empty({4 * hidden_size}).uniform_(-bound, bound));
  }
  m.register_attribute("hidden_size", c10::IntType::get(), hidden_size);
  m.register_attribute("recurrent_dropout", c10::FloatType::get(), recurrent_dropout);
  define(m, kBilstmForward, "BiLSTM");
  if (runtime == Runtime::kNative) {
    register_fused_lstm();
    define(m, kNativeSource, "BiLSTM (native)");
    return m;
  }
  define(m, kBilstmLengths, "BiLSTM");
  return m;
}

torch::jit::Module bigru(std::int64_t input_size, std::int64_t hidden_size, Runtime runtime) {
  require_config(input_size > 0 && hidden_size > 0, "BiGRU: sizes must be positive");
  auto m = new_module(runtime == Runtime::kNative ? "BiGRUNative" : "BiGRU");
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));  // torch.nn.GRU's init
  torch::NoGradGuard no_grad;
  for (const char* suffix : {"_l0", "_l0_reverse"}) {
    const std::string s = suffix;
    add_parameter(m, "weight_ih" + s, torch::empty({3 * hidden_size, input_size}).uniform_(-bound, bound));
    add_parameter(m, "weight_hh" + s, torch::empty({3 * hidden_size, hidden_size}).uniform_(-bound, bound));
    add_parameter(m, "bias_ih" + s, torch::empty({3 * hidden_size}).uniform_(-bound, bound));
    add_parameter(m, "bias_hh" + s, torch::empty({3 * hidden_size}).uniform_(-bound, bound));
  }
  m.register_attribute("hidden_size", c10::IntType::get(), hidden_size);
  define(m, R"(
def forward(self, x: Tensor) -> Tensor:
    # x [B, T, I] -> [B, T, 2H], every step
    params = [self.weight_ih_l0, self.weight_hh_l0, self.bias_ih_l0, self.bias_hh_l0,
              self.weight_ih_l0_reverse, self.weight_hh_l0_reverse, self.bias_ih_l0_reverse, self.bias_hh_l0_reverse]
    h0 = torch.zeros([2, x.size(0), self.hidden_size], dtype=x.dtype, device=x.device)
    out, h_n = torch.gru(x, h0, params, True, 1, 0.0, self.training, True, True)
    return out
)",
         "BiGRU");
  if (runtime == Runtime::kNative) {
    register_fused_gru();
    define(m, R"(
def forward_lengths(self, x: Tensor, lengths: Tensor) -> Tensor:
    return attn.bigru_lengths(x, lengths, self.weight_ih_l0, self.weight_hh_l0, self.bias_ih_l0, self.bias_hh_l0,
                              self.weight_ih_l0_reverse, self.weight_hh_l0_reverse, self.bias_ih_l0_reverse, self.bias_hh_l0_reverse)
)",
           "BiGRU (native)");
    return m;
  }
  define(m, R"(
def forward_lengths(self, x: Tensor, lengths: Tensor) -> Tensor:
    # post-padded x [B, T, I] whose row b is real on its first lengths[b] steps -> [B, T, 2H], zeros
    # at padding. The forward direction reads the real steps first, so padding after them cannot
    # reach them; the backward one reads each row's real steps reversed (a gather), then padding.
    h0 = torch.zeros([1, x.size(0), self.hidden_size], dtype=x.dtype, device=x.device)
    forward, h_n = torch.gru(x, h0, [self.weight_ih_l0, self.weight_hh_l0, self.bias_ih_l0, self.bias_hh_l0],
                             True, 1, 0.0, self.training, False, True)
    steps = torch.arange(x.size(1), device=x.device).unsqueeze(0)     # [1, T]
    n = lengths.unsqueeze(1)                                          # [B, 1]
    real = (steps < n).unsqueeze(-1).to(x.dtype)                      # [B, T, 1]
    reverse = torch.where(steps < n, n - 1 - steps, steps)            # row-wise reversal of the real steps
    x_reversed = x.gather(1, reverse.unsqueeze(-1).expand(-1, -1, x.size(2)))
    backward, h_n = torch.gru(x_reversed, h0, [self.weight_ih_l0_reverse, self.weight_hh_l0_reverse,
                              self.bias_ih_l0_reverse, self.bias_hh_l0_reverse], True, 1, 0.0, self.training, False, True)
    backward = backward.gather(1, reverse.unsqueeze(-1).expand(-1, -1, self.hidden_size))
    return torch.cat([forward, backward], -1) * real
)",
         "BiGRU");
  return m;
}

torch::jit::Module lstm_cell(std::int64_t input_size, std::int64_t hidden_size) {
  auto m = new_module("LSTMCell");
  torch::NoGradGuard no_grad;
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size));  // torch.nn.LSTMCell's init
  add_parameter(m, "weight_ih", torch::empty({4 * hidden_size, input_size}).uniform_(-k, k));
  add_parameter(m, "weight_hh", torch::empty({4 * hidden_size, hidden_size}).uniform_(-k, k));
  add_parameter(m, "bias_ih", torch::empty({4 * hidden_size}).uniform_(-k, k));
  add_parameter(m, "bias_hh", torch::empty({4 * hidden_size}).uniform_(-k, k));
  return m;
}

}  // namespace attn::nn::script
