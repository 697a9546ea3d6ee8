// attn train: train a registered model on a CSV or on prepared data, into a run directory.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/app.h"
#include "../common/launcher.h"
#include "../common/memory.h"
#include "../common/options.h"
#include "../common/progress.h"
#include "../common/torch_threads.h"
#include "attn/models/overrides.h"
#include "attn/tasks/command.h"
#include "attn/train/command.h"

namespace attn::apps {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) { g_stop = true; }

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn train",
      "Train a registered model (attn models) on a CSV or on data from attn prepare, into a run directory with\n"
      "config.json, tokenizer files, metrics.jsonl, checkpoint.pt and model.pt. Training flags left out take the\n"
      "model's defaults (attn models). Early stopping, learning-rate schedules, gradient clipping, class weights and\n"
      "pretrained word vectors as in Keras. Each model's task reads its own inputs:\n" +
          tasks::tasks_help(tasks::Command::kTrain) + "\n"
      "  attn train --csv train.csv --model bilstm-attention --out runs/toxic\n"
      "  attn train --csv features.csv --model feature-attention --out runs/features\n"
      "  attn train --csv tsd_train.csv --text-column text --spans-column spans --out runs/spans   (bilstm-tagger)\n"
      "  attn train --csv dates.csv --model seq2seq-attention --source-column human --target-column machine \\\n"
      "             --set score=general --out runs/dates\n"
      "  attn train --csv train.csv --embeddings glove.6B.100d.txt.gz --set embed_dim=100 --early-stopping-patience 2 \\\n"
      "             --monitor val_mean_auc --pos-weight auto --out runs/toxic-glove\n"
      "  attn train --resume runs/toxic            (continue after Ctrl-C, or with more --epochs)\n\n"
      "Ctrl-C or SIGTERM finishes the batch, saves checkpoint.pt and exits 130. Exit 1: a bad input file or a\n"
      "failed write; exit 2: a bad flag or setting.");
  const auto inputs = tasks::all_inputs(tasks::Command::kTrain);
  add_inputs(options, inputs);
  options.add_options("Model")
      ("model", "Registered model name (attn models lists them; default: the first whose task reads every input given, "
                "bilstm-attention, or bilstm-tagger with --spans-column)", cxxopts::value<std::string>())
      ("config", "JSON file of model config keys", cxxopts::value<std::string>())
      ("set", "Model config KEY=VALUE, after --config (repeatable)", cxxopts::value<std::vector<std::string>>())
      ("dump-config", "Print the effective configuration and training settings, and exit");
  const auto training = train::training_inputs();
  add_inputs(options, training);
  options.add_options("Output")
      ("out", "Run directory (created)", cxxopts::value<std::string>())
      ("resume", "Continue the run in this directory from its checkpoint", cxxopts::value<std::string>());
  add_distributed_options(options, "Train");
  // clang-format on
  add_threads_option(options);
  const cxxopts::ParseResult r = parse_options(options, argc, argv);
  if (const auto nproc = nproc_option(r))
    return run_as_local_workers(*nproc, "attn train", argc, argv, run);  // each worker: without --nproc
  train::TrainCommand command{
      {given<std::string>(r, "model").value_or(""),
       models::read_overrides(given<std::string>(r, "config").value_or(""),
                              given<std::vector<std::string>>(r, "set").value_or(std::vector<std::string>{})),
       train::training_overrides(inputs_of(r, training)), given<std::string>(r, "out").value_or(""), inputs_of(r, inputs), nullptr},
      given<std::string>(r, "resume").value_or(""),
      {},
      worker_timeout_option(r)};
  for (const auto& kv : r.arguments()) command.given.push_back(kv.key());
  if (command.resume.empty()) command.request.training["threads"] = threads_option(r);
  if (r.count("dump-config")) return std::printf("%s\n", train::planned_config(command.request).dump(2).c_str()), kExitOk;
  for (int sig : {SIGINT, SIGTERM}) std::signal(sig, on_signal);  // stop after the batch, checkpoint, exit 130
  const auto progress = [bar = ProgressBar()](const train::Progress& p) mutable {
    bar.show(p.epoch, p.epochs, p.rows_done, p.rows_total, p.seconds, p.loss, p.accuracy);
  };
  keep_freed_memory(Heaps::kOne);  // before any thread starts: step after step of similar tensors keeps its pages
  const train::TrainOutput output{[](const std::string& lines) { std::fputs(lines.c_str(), stdout), std::fflush(stdout); },
                                  ::isatty(2) ? std::function<void(const train::Progress&)>(progress) : nullptr,
                                  [](int threads) { set_torch_threads(threads); }};
  if (train::run_training(command, g_stop, output) == train::TrainOutcome::kFinished) return kExitOk;
  if (!std::getenv("RANK") || std::string(std::getenv("RANK")) == "0")
    std::fprintf(stderr, "\ninterrupted: checkpoint saved; continue with: attn train --resume %s\n",
                 (command.resume.empty() ? command.request.out_dir : command.resume).c_str());
  return kExitInterrupted;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app(attn::apps::worker_command_name("attn train"), attn::apps::run, argc, argv); }
