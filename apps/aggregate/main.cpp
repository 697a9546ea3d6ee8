// attn aggregate: which words drive each label across a whole file (word importance over a corpus).
#include <cstdio>

#include "../common/app.h"
#include "../common/launcher.h"
#include "../common/memory.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/aggregate.h"
#include "attn/analyses/commands.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn aggregate",
      "Word importance over a whole file: every row explained by each method, and per label (the rows the model\n"
      "decides for it: its most probable class, or p >= 0.5 for 0/1 labels) the words with the highest mean score,\n"
      "with their count and a stability figure (Kendall's tau of the ranking between the file's two halves).\n"
      "Definitions: docs/importance.md.\n"
      "  attn aggregate --model runs/toxic --csv data/toxic_sample.csv --html words.html\n"
      "  attn aggregate --model runs/hx --csv hatexplain/val.jsonl --methods attention,integrated-gradients --json words.json\n"
      "  attn aggregate --model runs/toxic --csv comments.csv --nproc 2 --threads 1 --json words.json\n\n"
      "With --nproc N (or under torchrun) the workers share the chunks of rows and rank 0 writes the files: the same\n"
      "bytes one process writes.");
  add_model_option(options, "a text classifier");
  const auto inputs = tasks::all_inputs(tasks::Command::kAggregate);
  add_inputs(options, inputs);
  add_methods_option(options, "the words each ranks (default: attention and grad-input)");
  add_steps_option(options);
  options.add_options("Methods")
      ("top", "Words listed per method and label", cxxopts::value<std::int64_t>()->default_value("20"))
      ("min-count", "Rank a word only if seen this often in the label's rows", cxxopts::value<std::int64_t>()->default_value("5"))
      ("batch-size", "Texts explained at once", cxxopts::value<std::int64_t>()->default_value("64"));
  options.add_options("Output")
      ("json", "Write every method and label's words as JSON here", cxxopts::value<std::string>())
      ("words-csv", "Write them as CSV here (method, label, rank, word, count, mean)", cxxopts::value<std::string>())
      ("html", "Write them as an HTML page here", cxxopts::value<std::string>());
  add_distributed_options(options, "Explain");
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  if (const auto nproc = nproc_option(r))
    return run_as_local_workers(*nproc, "attn aggregate", argc, argv, run);  // each worker: without --nproc
  // A heap per thread: the threads explain a batch each at once, every row's words and tokens many
  // small blocks; on one heap they waited for each other (20,000 comments: 12,400 context switches
  // against 200, 2.12 -> 1.88 s).
  keep_freed_memory(Heaps::kPerThread);
  analyses::AggregateRequest request;
  request.model = model_option(r);
  request.options = inputs_of(r, inputs);
  if (auto methods = methods_option(r); !methods.empty()) request.methods = std::move(methods);
  request.steps = steps_option(r);
  request.top = r["top"].as<std::int64_t>();
  request.min_count = r["min-count"].as<std::int64_t>();
  request.batch_size = r["batch-size"].as<std::int64_t>();
  request.json = given<std::string>(r, "json").value_or("");
  request.csv = given<std::string>(r, "words-csv").value_or("");
  request.html = given<std::string>(r, "html").value_or("");
  return print(analyses::aggregate(request, worker_timeout_option(r)));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app(attn::apps::worker_command_name("attn aggregate"), attn::apps::run, argc, argv); }
