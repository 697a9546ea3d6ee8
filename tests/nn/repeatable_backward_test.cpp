// RepeatableBackward: what tells attn's kernels, on this thread, to keep what their forward passes save
// (their repeated backward passes: fused_lstm_test.cpp, fused_attention_test.cpp).
#include <thread>

#include <catch2/catch.hpp>

#include "attn/nn/repeatable_backward.h"

using attn::nn::RepeatableBackward;

TEST_CASE("RepeatableBackward: on while one lives, nested ones restore, only on its own thread", "[nn][repeatable]") {
  CHECK_FALSE(RepeatableBackward::active());
  {
    const RepeatableBackward outer;
    CHECK(RepeatableBackward::active());
    {
      const RepeatableBackward inner;
      CHECK(RepeatableBackward::active());
    }
    CHECK(RepeatableBackward::active());  // the inner one's end leaves the outer's in force
    bool elsewhere = true;
    std::thread([&] { elsewhere = RepeatableBackward::active(); }).join();
    CHECK_FALSE(elsewhere);
  }
  CHECK_FALSE(RepeatableBackward::active());
}
