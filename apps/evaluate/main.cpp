// attn evaluate: batch scoring of a CSV with a trained model: predictions and the task's metrics.
#include <chrono>
#include <cstdio>

#include "../common/app.h"
#include "../common/launcher.h"
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
      "attn evaluate",
      "Score every row of a CSV with a trained model, exactly as validation scores the held-out rows. By model:\n" +
          tasks::tasks_help(tasks::Command::kEvaluate) + "\n"
      "  attn evaluate --model runs/toxic --csv test.csv --labels-csv test_labels.csv --predictions sub.csv\n"
      "  attn evaluate --model runs/features --csv features.csv --svg attention.svg\n"
      "  attn evaluate --model runs/dates --csv dates-test.csv --predictions dates-out.csv\n"
      "  attn evaluate --model runs/toxic --csv test.csv --predictions sub.csv --nproc 2 --threads 1\n\n"
      "With --nproc N (or under torchrun) the workers share the rows' batches and rank 0 writes the files:\n"
      "the same bytes one process writes.");
  add_model_option(options);
  const auto inputs = tasks::all_inputs(tasks::Command::kEvaluate);
  add_inputs(options, inputs);
  options.add_options("Output")
      ("predictions", "Write the predictions here (text models: id + one probability column per label)", cxxopts::value<std::string>())
      ("metrics", "Write the metrics as JSON here", cxxopts::value<std::string>())
      ("batch-size", "Rows per batch (the batches validation scored)", cxxopts::value<std::int64_t>()->default_value(std::to_string(attn::tasks::kScoringBatchSize)));
  add_distributed_options(options, "Score");
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  if (const auto nproc = nproc_option(r))
    return run_as_local_workers(*nproc, "attn evaluate", argc, argv, run);  // each worker: without --nproc
  const int threads = threads_option(r);
  keep_freed_memory(Heaps::kOne);  // batch after batch of similar tensors: keep their pages (20k comments: 6.0 -> 4.4-5.4 s)
  data::Inputs in = inputs_of(r, inputs);
  const analyses::EvaluateRequest request{model_option(r),
                                          in.text("csv"),
                                          in,
                                          r["batch-size"].as<std::int64_t>(),
                                          threads,
                                          given<std::string>(r, "predictions").value_or(""),
                                          given<std::string>(r, "metrics").value_or("")};
  return print(analyses::evaluate(request, worker_timeout_option(r)));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app(attn::apps::worker_command_name("attn evaluate"), attn::apps::run, argc, argv); }
