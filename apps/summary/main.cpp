// attn summary: a Keras-like layer table of a registered model or a trained run.
#include <cstdio>

#include "../common/app.h"
#include "attn/analyses/commands.h"
#include "attn/models/overrides.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options("attn summary", "Print a model's layers, output shapes and parameter counts.\n\n"
                                           "  attn summary --model bilstm-attention\n  attn summary --model runs/toxic");
  options.add_options("Input")
      ("model", "A registered model name, or a run directory / model.pt", cxxopts::value<std::string>())
      ("set", "Config override KEY=VALUE (repeatable; with a model name)", cxxopts::value<std::vector<std::string>>());
  // clang-format on
  const cxxopts::ParseResult r = parse_options(options, argc, argv);
  const auto overrides = models::read_overrides("", given<std::vector<std::string>>(r, "set").value_or(std::vector<std::string>{}));
  return print(analyses::summarize(required<std::string>(r, "model"), overrides));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn summary", attn::apps::run, argc, argv); }
