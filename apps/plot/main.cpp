// attn plot: training curves of one or more runs as an SVG.
#include <cstdio>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/report/curves.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options("attn plot",
                           "Draw training curves from run directories' metrics.jsonl: the loss per epoch (training solid,\n"
                           "validation dashed) and the main metric (validation mean AUC, exact match or accuracy), several runs\n"
                           "overlaid in colours, the best epoch ringed. One self-contained SVG.\n\n"
                           "  attn plot runs/toxic runs/transformer --out curves.svg");
  options.positional_help("RUN_DIR...");
  options.add_options("Output")("out", "The SVG to write", cxxopts::value<std::string>());
  // clang-format on
  const cxxopts::ParseResult parsed = parse_options(options, argc, argv, /*takes_positional=*/true);
  const auto out = required<std::string>(parsed, "out");
  if (parsed.unmatched().empty()) throw UsageError("give one or more run directories");
  io::write_file_atomic(out, report::training_curves_svg(parsed.unmatched()));
  std::printf("wrote %s (%zu runs)\n", out.c_str(), parsed.unmatched().size());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn plot", attn::apps::run, argc, argv); }
