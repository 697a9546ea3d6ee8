#pragma once
/// A progress bar on a terminal's standard error, redrawn at most five times a second.
#include <cstdint>

namespace attn::apps {

class ProgressBar {
 public:
  /// "epoch 2/3 [=====     ] 640/1000  1200 rows/s  ETA 0 s  loss 0.2  acc 0.9"; a new line at the epoch's end.
  void show(int epoch, int epochs, std::int64_t done, std::int64_t total, double seconds, double loss, double accuracy);

 private:
  double last_ = -1;
};

}  // namespace attn::apps
