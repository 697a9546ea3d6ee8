// FusedAdam: LibTorch's Adam in one pass. Same updates within float rounding, same state, the
// same checkpoints in both directions, the same bits for any thread count.
#include <sstream>

#include <torch/torch.h>
#include <catch2/catch.hpp>

#include "attn/nn/adam.h"

using attn::nn::FusedAdam;

namespace {

/// Parameters shaped like bilstm-attention's (an embedding, LSTM weights, a vector, an odd-sized
/// matrix whose length is no multiple of a vector register), from a seed.
std::vector<torch::Tensor> parameters(std::uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> ps;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{3000, 16}, {240, 60}, {240}, {7, 13}})
    ps.push_back(torch::randn(shape).requires_grad_(true));
  return ps;
}

/// Gives every parameter the gradient of step `t` (a fixed function of the step and the parameter).
void set_gradients(std::vector<torch::Tensor>& ps, int t) {
  torch::manual_seed(1000 + t);
  for (auto& p : ps) p.mutable_grad() = torch::randn_like(p) * (0.5 + t) + (t % 2 ? 1e-3 : -2.0);
}

torch::optim::AdamOptions options() { return torch::optim::AdamOptions(1e-2).betas({0.9, 0.999}).eps(1e-7); }

float max_difference(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<float>(); }

}  // namespace

TEST_CASE("FusedAdam updates parameters and moments as LibTorch's Adam does, within float rounding", "[adam]") {
  auto mine = parameters(1), theirs = parameters(1);
  FusedAdam fused(mine, options());
  torch::optim::Adam reference(theirs, options());
  for (int t = 0; t < 8; ++t) {
    set_gradients(mine, t);
    set_gradients(theirs, t);
    fused.step();
    reference.step();
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    INFO("parameter " << i);
    CHECK_FALSE(mine[i].equal(parameters(1)[i]));  // it moved
    // Parameters of order 1 moved by 8 steps of order lr = 1e-2: equal to a few float ulps of 1.
    CHECK(max_difference(mine[i], theirs[i]) < 1e-6);
  }
  // The state is LibTorch's: a FusedAdam checkpoint loads into LibTorch's Adam, which goes on as
  // the reference does (lost moments or step counts would restart the bias correction: far off).
  torch::serialize::OutputArchive out;
  fused.save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  std::vector<torch::Tensor> continued;
  for (const auto& p : mine) continued.push_back(p.detach().clone().requires_grad_(true));
  torch::optim::Adam from_fused(continued, options());
  std::istringstream in_bytes(bytes.str());
  torch::serialize::InputArchive in;
  in.load_from(in_bytes);
  from_fused.load(in);
  for (int t = 8; t < 12; ++t) {
    set_gradients(continued, t);
    set_gradients(theirs, t);
    from_fused.step();
    reference.step();
  }
  for (std::size_t i = 0; i < continued.size(); ++i) CHECK(max_difference(continued[i], theirs[i]) < 2e-6);
}

TEST_CASE("FusedAdam resumes from a checkpoint exactly as if never interrupted", "[adam]") {
  auto straight = parameters(2);
  FusedAdam uninterrupted(straight, options());
  for (int t = 0; t < 6; ++t) {
    set_gradients(straight, t);
    uninterrupted.step();
  }
  auto first = parameters(2);
  std::string checkpoint;
  {
    FusedAdam before(first, options());
    for (int t = 0; t < 3; ++t) {
      set_gradients(first, t);
      before.step();
    }
    torch::serialize::OutputArchive out;
    before.save(out);
    std::ostringstream s;
    out.save_to(s);
    checkpoint = s.str();
  }
  auto resumed = first;  // the parameters as the checkpoint left them
  for (auto& p : resumed) p = p.detach().clone().requires_grad_(true);
  FusedAdam after(resumed, options());
  std::istringstream s(checkpoint);
  torch::serialize::InputArchive in;
  in.load_from(s);
  after.load(in);
  for (int t = 3; t < 6; ++t) {
    set_gradients(resumed, t);
    after.step();
  }
  for (std::size_t i = 0; i < straight.size(); ++i) CHECK(resumed[i].equal(straight[i]));
}

TEST_CASE("FusedAdam gives the same bits on one thread and on two", "[adam]") {
  const int before = torch::get_num_threads();
  std::vector<std::vector<torch::Tensor>> results;
  for (int threads : {1, 2}) {
    torch::set_num_threads(threads);
    auto ps = parameters(3);
    FusedAdam fused(ps, options());
    for (int t = 0; t < 4; ++t) {
      set_gradients(ps, t);
      fused.step();
    }
    results.push_back(ps);
  }
  torch::set_num_threads(before);
  for (std::size_t i = 0; i < results[0].size(); ++i) CHECK(results[0][i].equal(results[1][i]));
}

TEST_CASE("FusedAdam leaves parameters without a gradient alone and takes LibTorch's step for weight decay", "[adam]") {
  auto ps = parameters(4), reference_ps = parameters(4);
  FusedAdam fused(ps, options().weight_decay(0.1));
  torch::optim::Adam reference(reference_ps, options().weight_decay(0.1));
  set_gradients(ps, 0);
  set_gradients(reference_ps, 0);
  ps[1].mutable_grad() = torch::Tensor();
  reference_ps[1].mutable_grad() = torch::Tensor();
  fused.step();
  reference.step();
  CHECK(ps[1].equal(parameters(4)[1]));
  for (std::size_t i = 0; i < ps.size(); ++i) CHECK(ps[i].equal(reference_ps[i]));  // LibTorch's own step: the same bits
}
