#pragma once
/// Adam in one pass: torch::optim::Adam's update with each parameter's moments and value updated
/// in a single sweep over memory on LibTorch's threads, where LibTorch's step makes seven passes
/// and a temporary the size of the parameter (for the 20000 x 128 word embedding that is most of
/// the optimizer's time).
#include <torch/optim/adam.h>

namespace attn::nn {

/// torch::optim::Adam with a fused step: the same options, the same per-parameter state (so the
/// same checkpoints: save and load are torch::optim::Adam's), equal to LibTorch's step within float
/// rounding and independent of the thread count. Weight decay, AMSGrad, and parameters that are not
/// contiguous float32 CPU tensors take LibTorch's own step.
class FusedAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace attn::nn
