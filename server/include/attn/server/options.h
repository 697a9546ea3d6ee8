#pragma once
/// `attn serve`'s settings as command-line inputs: one table binds each flag to its help, its
/// default (ServeOptions{}'s) and its field of ServeOptions, as training's options are bound
/// (train/options.h). The app registers them and hands the values back; --model and
/// --allowed-host (repeatable), ATTN_API_KEY and --threads are the app's.
#include <vector>

#include "attn/data/inputs.h"
#include "attn/server/server.h"

namespace attn::server {

/// Every setting's flag, help and default, by group.
std::vector<data::InputSpec> serve_inputs();
/// The settings `inputs` give, the rest ServeOptions{}'s; a value a flag cannot take throws
/// std::invalid_argument naming the flag.
ServeOptions serve_options(const data::Inputs& inputs);

}  // namespace attn::server
