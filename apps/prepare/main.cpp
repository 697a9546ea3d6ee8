// attn prepare: CSV -> Keras-exact tokenizer.json, padded ids (data.pt) and a report (prepare.json).
#include <chrono>
#include <cstdio>

#include "../common/app.h"
#include "../common/memory.h"
#include "attn/data/prepare.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options("attn prepare",
                           "Fit a Keras-exact tokenizer on a CSV's text column (or apply a fitted one) and write\n"
                           "DIR/tokenizer.json (Keras format), DIR/data.pt (padded ids, lengths, labels, ids;\n"
                           "torch.load-able) and DIR/prepare.json (settings and statistics).");
  const auto specs = data::prepare_inputs();
  add_inputs(options, specs);
  options.add_options("Output")("out", "Output directory (created if missing)", cxxopts::value<std::string>());
  // clang-format on
  add_threads_option(options);
  const cxxopts::ParseResult parsed = parse_options(options, argc, argv);
  const auto out_dir = required<std::string>(parsed, "out");
  data::PrepareOptions o = data::prepare_options(inputs_of(parsed, specs), threads_option(parsed));
  o.pad_in_memory = false;  // padded straight into data.pt

  const auto t0 = std::chrono::steady_clock::now();
  // Before the tokenizer's threads start: the texts the reader allocates and the workers free, and
  // the tables and rows after them, reuse one heap's pages (160k comments: 80k -> 60k page faults).
  keep_freed_memory(Heaps::kOne);
  const data::Prepared prepared = data::prepare_csv(o);
  data::write_prepared_dir(prepared, out_dir);
  std::fputs(data::summary(prepared).c_str(), stdout);
  std::printf("  wrote      %s/{tokenizer.json, data.pt, prepare.json}: [%lld, %lld] ids, %zu labels, in %.3f s\n", out_dir.c_str(),
              static_cast<long long>(prepared.data.x.rows), static_cast<long long>(prepared.data.x.cols), prepared.data.label_names.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn prepare", attn::apps::run, argc, argv); }
