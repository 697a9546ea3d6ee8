// Repeatable backward passes through attn's kernels (see repeatable_backward.h).
#include "attn/nn/repeatable_backward.h"

namespace attn::nn {

thread_local bool RepeatableBackward::active_ = false;

RepeatableBackward::RepeatableBackward() : previous_(active_) { active_ = true; }
RepeatableBackward::~RepeatableBackward() { active_ = previous_; }
bool RepeatableBackward::active() { return active_; }

}  // namespace attn::nn
