#include "torch_threads.h"

#include <algorithm>
#include <thread>

#include <ATen/Parallel.h>

namespace attn::apps {

void set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
}

cxxopts::ParseResult parse_model_command(cxxopts::Options& options, int argc, char** argv, bool takes_positional) {
  add_threads_option(options);
  cxxopts::ParseResult r = parse_options(options, argc, argv, takes_positional);
  set_torch_threads(threads_option(r));
  return r;
}

}  // namespace attn::apps
