#pragma once
/// LibTorch's intra-op thread count, for the apps that link LibTorch. Declared here and defined in
/// torch_threads.cpp (the one app file that includes LibTorch), so the app mains stay torch-free and
/// compile in seconds. See memory.h: process-wide settings are the apps' to make.

#include "app.h"

namespace attn::apps {

/// n threads (n <= 0: every core). LibTorch's default on this platform is 1.
void set_torch_threads(int n);

/// A command that runs models: --threads added to `options`, argv parsed (parse_options), and
/// LibTorch's threads set from --threads.
cxxopts::ParseResult parse_model_command(cxxopts::Options& options, int argc, char** argv, bool takes_positional = false);

}  // namespace attn::apps
