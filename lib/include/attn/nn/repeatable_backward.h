#pragma once
/// attn's autograd kernels (fused_lstm.h, fused_attention.h) write their gradients over what their
/// forward pass saved, so a graph through them can be differentiated once. While a
/// RepeatableBackward lives on a thread, forward passes that thread runs keep what they save intact
/// instead (their backward passes allocate the gradients apart), so the graph can be run backward
/// again (retain_graph): the importance methods run one forward pass and a backward pass per label.
namespace attn::nn {

class RepeatableBackward {
 public:
  RepeatableBackward();
  ~RepeatableBackward();
  RepeatableBackward(const RepeatableBackward&) = delete;
  RepeatableBackward& operator=(const RepeatableBackward&) = delete;
  /// Whether one lives on this thread.
  static bool active();

 private:
  bool previous_;
  static thread_local bool active_;
};

}  // namespace attn::nn
