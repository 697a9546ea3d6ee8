// attn faithfulness: which importance method to believe, measured on a CSV's rows (ERASER's
// comprehensiveness and sufficiency, Kendall tau with leave-one-out, a random floor).
#include <unistd.h>

#include <cstdio>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/commands.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn faithfulness",
      "Measure how faithful each importance method is to a trained classifier on the first --rows rows of a CSV\n"
      "(text models: rows whose text keeps at least 2 tokens). For each method and label: comprehensiveness\n"
      "(p(x) - p(x without the method's top k% tokens): higher is better) and sufficiency (p(x) - p(only those\n"
      "tokens): lower is better) for k = 1, 5, 10, 20, 50 and their means (AOPC), Kendall's tau-b with\n"
      "leave-one-out, a seeded random ranking as the floor, and the methods' pairwise agreement. Definitions:\n"
      "docs/importance.md. By model:\n" +
          tasks::tasks_help(tasks::Command::kFaithfulness) + "\n"
      "  attn faithfulness --model runs/toxic --csv data/toxic_sample.csv --rows 150 --json faithfulness.json\n"
      "  attn faithfulness --model runs/toxic --csv test.csv --methods attention,integrated-gradients --per-row rows.jsonl");
  add_model_option(options);
  options.add_options("Input")
      ("csv", "The rows to measure on", cxxopts::value<std::string>())
      ("rows", "How many rows (the first that can be measured)", cxxopts::value<std::int64_t>()->default_value("100"));
  const auto inputs = tasks::all_inputs(tasks::Command::kFaithfulness);
  add_inputs(options, inputs);
  add_methods_option(options, "the ones to measure (default: every one the model gives; random is always added)");
  add_steps_option(options);
  options.add_options("Methods")
      ("seed", "The random ranking's seed", cxxopts::value<std::uint64_t>()->default_value("1"));
  options.add_options("Output")
      ("json", "Write the figures as JSON here", cxxopts::value<std::string>())
      ("per-row", "Write each row's figures as JSON Lines here", cxxopts::value<std::string>());
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  const int threads = threads_option(r);
  keep_freed_memory(Heaps::kOne);  // thousands of forward and backward passes of similar tensors: keep their pages
  analyses::FaithfulnessRequest request;
  request.model = model_option(r);
  request.csv = required<std::string>(r, "csv");
  request.options = inputs_of(r, inputs);
  request.rows = r["rows"].as<std::int64_t>();
  if (auto methods = methods_option(r); !methods.empty()) request.methods = std::move(methods);
  request.steps = steps_option(r);
  request.seed = r["seed"].as<std::uint64_t>();
  request.threads = threads;
  request.json = given<std::string>(r, "json").value_or("");
  request.per_row = given<std::string>(r, "per-row").value_or("");
  if (isatty(STDERR_FILENO))
    request.progress = [](std::int64_t done, std::int64_t total) {
      std::fprintf(stderr, "\rfaithfulness: %lld/%lld rows", static_cast<long long>(done), static_cast<long long>(total));
      if (done == total) std::fputs("\n", stderr);
      std::fflush(stderr);
    };
  return print(analyses::faithfulness(request));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn faithfulness", attn::apps::run, argc, argv); }
