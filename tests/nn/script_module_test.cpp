// The TorchScript plumbing: the eval-mode guard and configuration errors.
#include <stdexcept>

#include "attn/nn/attention.h"
#include "attn/nn/layers.h"
#include "nn_test_util.h"

using namespace attn::nn;

TEST_CASE("EvalModeGuard: eval mode and no gradients inside, the previous mode after, also on exceptions", "[nn][script]") {
  torch::jit::Module m = script::linear(3, 2);
  m.train();
  {
    EvalModeGuard guard(m);
    CHECK_FALSE(m.is_training());
    CHECK_FALSE(torch::GradMode::is_enabled());
    CHECK_FALSE(m.forward({torch::randn({1, 3})}).toTensor().requires_grad());
  }
  CHECK(m.is_training());
  CHECK(torch::GradMode::is_enabled());
  try {
    EvalModeGuard guard(m);
    throw std::runtime_error("midway");
  } catch (const std::runtime_error&) {
  }
  CHECK(m.is_training());
  m.eval();
  { EvalModeGuard guard(m); }
  CHECK_FALSE(m.is_training());
}

TEST_CASE("configuration errors are std::invalid_argument with the message", "[nn][script]") {
  CHECK_THROWS_AS(require_config(false, "x must be positive"), std::invalid_argument);
  CHECK_THROWS_WITH(WordAttention(WordAttentionOptions(0)), Catch::Contains("WordAttention: dim must be positive"));
  CHECK_NOTHROW(require_config(true, "never"));
}
