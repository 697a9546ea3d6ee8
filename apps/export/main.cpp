// attn export: a run's trained model as one TorchScript file (config and tokenizer embedded).
#include <cstdio>

#include "../common/app.h"
#include "../common/options.h"
#include "attn/analyses/commands.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options("attn export",
                           "Write a run's model as one TorchScript file with its config.json and tokenizer files\n"
                           "embedded, for attn or Python's torch.jit.load. Its methods, by model:\n" +
                               tasks::tasks_help(tasks::Command::kExport) + "\n"
                           "  attn export --model runs/toxic --out toxic.pt");
  add_model_option(options);
  options.add_options("Output")("out", "Output file", cxxopts::value<std::string>());
  // clang-format on
  const cxxopts::ParseResult parsed = parse_options(options, argc, argv);
  return print(analyses::export_model(model_option(parsed), required<std::string>(parsed, "out")));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn export", attn::apps::run, argc, argv); }
