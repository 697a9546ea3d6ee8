// A progress bar on a terminal (see progress.h).
#include "progress.h"

#include <cstdio>
#include <string>

namespace attn::apps {

void ProgressBar::show(int epoch, int epochs, std::int64_t done, std::int64_t total, double seconds, double loss, double accuracy) {
  if (seconds - last_ < 0.2 && done < total) return;
  last_ = seconds;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1;
  const int width = 30, filled = static_cast<int>(frac * width);
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
  std::fprintf(stderr, "\repoch %d/%d [%s%s] %lld/%lld  %.0f rows/s  ETA %.0f s  loss %.4f  acc %.4f   %s", epoch, epochs,
               std::string(static_cast<std::size_t>(filled), '=').c_str(),
               std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), static_cast<long long>(done),
               static_cast<long long>(total), rate, eta, loss, accuracy, done >= total ? "\n" : "");
}

}  // namespace attn::apps
