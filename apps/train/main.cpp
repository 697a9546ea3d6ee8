// attn train: train a registered model on a CSV or on prepared data, into a run directory.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/io/threads.h"
#include "attn/models/registry.h"
#include "attn/train/run.h"

namespace attn::apps {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) { g_stop = true; }

void print_progress(const train::Progress& p) {
  static double last = -1;
  if (p.seconds - last < 0.2 && p.rows_done < p.rows_total) return;
  last = p.seconds;
  const double frac = p.rows_total ? static_cast<double>(p.rows_done) / static_cast<double>(p.rows_total) : 1;
  const int width = 30, filled = static_cast<int>(frac * width);
  const double rate = p.seconds > 0 ? static_cast<double>(p.rows_done) / p.seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(p.rows_total - p.rows_done) / rate : 0;
  std::fprintf(stderr, "\repoch %d/%d [%s%s] %lld/%lld  %.0f rows/s  ETA %.0f s  loss %.4f  acc %.4f   ", p.epoch, p.epochs,
               std::string(static_cast<std::size_t>(filled), '=').c_str(),
               std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), static_cast<long long>(p.rows_done),
               static_cast<long long>(p.rows_total), rate, eta, p.loss, p.accuracy);
  if (p.rows_done >= p.rows_total) std::fputc('\n', stderr);
}

// "epoch 2/3  loss ..  acc ..  val_loss ..  val_acc ..  val_auc ..", then one line per metric group
// (per-label AUC, per-feature attention).
void print_epoch(const train::EpochRecord& e, int epochs) {
  std::string line = "epoch " + std::to_string(e.epoch) + "/" + std::to_string(epochs);
  char buf[160];
  std::snprintf(buf, sizeof buf, "  loss %.4f  acc %.4f", e.loss, e.accuracy);
  line += buf;
  std::string groups;
  for (const auto& [key, value] : e.validation.items()) {
    if (value.is_number()) {
      std::snprintf(buf, sizeof buf, "  val_%s %.4f", key.c_str(), value.get<double>());
      line += buf;
    } else if (value.is_object()) {
      groups += "  val_" + key + ":";
      for (const auto& [name, v] : value.items()) {
        std::snprintf(buf, sizeof buf, " %s %.4f", name.c_str(), v.is_number() ? v.get<double>() : std::nan(""));
        groups += buf;
      }
      groups += "\n";
    }
  }
  std::snprintf(buf, sizeof buf, "  (%.1f s, %.0f rows/s)", e.seconds, e.rows_per_second);
  std::printf("%s%s\n%s", line.c_str(), buf, groups.c_str());
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  cxxopts::Options options(
      "attn train",
      "Train a registered model (attn models) on a CSV or on data from attn prepare, into a run directory with\n"
      "config.json, tokenizer files, metrics.jsonl, checkpoint.pt and model.pt. Text models read --text-column\n"
      "and --labels; feature-attention reads --feature-columns and --label-column; seq2seq-attention reads\n"
      "--source-column and --target-column.\n\n"
      "  attn train --csv train.csv --model bilstm-attention --out runs/toxic\n"
      "  attn train --csv features.csv --model feature-attention --out runs/features\n"
      "  attn train --csv dates.csv --model seq2seq-attention --source-column human --target-column machine \\\n"
      "             --set score=general --out runs/dates\n"
      "  attn train --resume runs/toxic            (continue after Ctrl-C, or with more --epochs)");
  add_prepare_options(options);
  options.add_options("Input")
      ("data", "Prepared data directory (attn prepare --out DIR) instead of --csv (text models)",
       cxxopts::value<std::string>())
      ("feature-columns", "feature-attention: feature columns (default: every column but the label and id)",
       cxxopts::value<std::string>())
      ("label-column", "feature-attention: the 0/1 label column", cxxopts::value<std::string>()->default_value("label"))
      ("source-column", "seq2seq-attention: the input strings", cxxopts::value<std::string>()->default_value("source"))
      ("target-column", "seq2seq-attention: the output strings", cxxopts::value<std::string>()->default_value("target"));
  options.add_options("Model")
      ("model", "Registered model name", cxxopts::value<std::string>()->default_value("bilstm-attention"))
      ("config", "JSON file of model config keys", cxxopts::value<std::string>())
      ("set", "Model config KEY=VALUE, after --config (repeatable)", cxxopts::value<std::vector<std::string>>())
      ("dump-config", "Print the effective configuration and exit");
  options.add_options("Training")
      ("epochs", "Epochs", cxxopts::value<int>()->default_value("3"))
      ("batch-size", "Rows per batch", cxxopts::value<std::int64_t>()->default_value("512"))
      ("val-split", "Last fraction of the rows held out for validation", cxxopts::value<double>()->default_value("0.2"))
      ("lr", "Adam learning rate", cxxopts::value<double>()->default_value("0.001"))
      ("seed", "Random seed (same seed and threads, same metrics)", cxxopts::value<std::uint64_t>()->default_value("0"))
      ("no-bucket", "Pad every batch to maxlen instead of bucketing rows by length (for comparison)");
  options.add_options("Output")
      ("out", "Run directory (created)", cxxopts::value<std::string>())
      ("resume", "Continue the run in this directory from its checkpoint", cxxopts::value<std::string>());
  add_threads_option(options);
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  const int threads = threads_option(r);
  io::set_torch_threads(threads);

  std::optional<train::TrainingRun> run;
  if (r.count("resume")) {
    if (r.count("csv") || r.count("data") || r.count("out")) throw UsageError("--resume takes no --csv, --data or --out");
    run.emplace(train::TrainingRun::resume(r["resume"].as<std::string>(),
                                           r.count("epochs") ? std::optional<int>(r["epochs"].as<int>()) : std::nullopt));
  } else {
    train::RunOptions o;
    o.model = r["model"].as<std::string>();
    o.model_overrides = nlohmann::json::object();
    if (r.count("config")) {
      const std::string path = r["config"].as<std::string>();
      try {
        o.model_overrides = nlohmann::json::parse(io::read_file(path));
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": not valid JSON: " + e.what());
      }
    }
    if (r.count("set"))
      for (const auto& a : r["set"].as<std::vector<std::string>>()) {
        try {
          o.model_overrides.update(models::parse_assignment(a));
        } catch (const std::invalid_argument& e) {
          throw UsageError(std::string("--set: ") + e.what());
        }
      }
    try {  // a bad model name, config key or value is a bad flag: check before any work, by building it
      const models::ModelEntry& entry = models::find_model(o.model);
      entry.build(models::resolve_config(entry, o.model_overrides));
    } catch (const c10::Error& e) {
      throw UsageError(e.what_without_backtrace());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (r.count("dump-config")) {
      const models::ModelEntry& entry = models::find_model(o.model);
      std::printf("%s\n", nlohmann::json({{"model", entry.name}, {"model_config", models::resolve_config(entry, o.model_overrides)}})
                              .dump(2)
                              .c_str());
      return kExitOk;
    }
    o.out_dir = required<std::string>(r, "out");
    o.threads = threads;
    o.train.epochs = r["epochs"].as<int>();
    o.train.batch_size = r["batch-size"].as<std::int64_t>();
    o.train.val_split = r["val-split"].as<double>();
    o.train.lr = r["lr"].as<double>();
    o.train.seed = r["seed"].as<std::uint64_t>();
    o.train.bucket = !r.count("no-bucket");
    if (o.train.epochs < 1 || o.train.batch_size < 1 || o.train.lr <= 0 || o.train.val_split < 0 || o.train.val_split >= 1)
      throw UsageError("--epochs and --batch-size must be >= 1, --lr > 0, --val-split in [0, 1)");
    if (r.count("csv") == r.count("data")) throw UsageError("give exactly one of --csv and --data");
    const models::TaskKind task = models::find_model(o.model).task;
    if (r.count("csv")) {
      o.data.csv = r["csv"].as<std::string>();
      if (task == models::TaskKind::kTextClassification) o.data.prepare = prepare_options(r, o.data.csv, threads);
    } else {
      if (task != models::TaskKind::kTextClassification) throw UsageError("--data is for text models; give --csv");
      o.data.data_dir = r["data"].as<std::string>();
    }
    if (r.count("feature-columns")) o.data.feature_columns = split_list(r["feature-columns"].as<std::string>());
    o.data.label_column = r["label-column"].as<std::string>();
    o.data.source_column = r["source-column"].as<std::string>();
    o.data.target_column = r["target-column"].as<std::string>();
    run.emplace(train::TrainingRun::start(o));
  }
  const nlohmann::json& cfg = run->config();
  const int epochs = cfg.at("training").at("epochs");
  const auto& data = cfg.at("data");
  std::printf("training %s on %lld rows (%s), %d epochs, batch %lld, %s batches, %d threads -> %s\n",
              cfg.at("model").get<std::string>().c_str(), static_cast<long long>(data.at("rows").get<std::int64_t>()),
              data.value("dir", data.value("csv", std::string())).c_str(), epochs,
              static_cast<long long>(cfg.at("training").at("batch_size").get<std::int64_t>()),
              cfg.value("task", "") == "feature-classification" ? "shuffled"
              : cfg.at("training").at("bucket").get<bool>()              ? "length-bucketed"
                                                                   : "maxlen-padded",
              threads,
              r.count("resume") ? r["resume"].as<std::string>().c_str() : r["out"].as<std::string>().c_str());
  std::fflush(stdout);
  std::signal(SIGINT, on_sigint);
  const bool tty = ::isatty(2);
  const bool done = run->train(
      g_stop, tty ? std::function<void(const train::Progress&)>(print_progress) : nullptr,
      [&](const train::EpochRecord& e) { print_epoch(e, epochs); });
  if (!done) {
    std::fprintf(stderr, "\ninterrupted: checkpoint saved; continue with: attn train --resume %s\n",
                 r.count("resume") ? r["resume"].as<std::string>().c_str() : r["out"].as<std::string>().c_str());
    return 130;
  }
  std::printf("done: model.pt, metrics.jsonl and checkpoint.pt in %s\n",
              r.count("resume") ? r["resume"].as<std::string>().c_str() : r["out"].as<std::string>().c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn train", [&] { return attn::apps::run(argc, argv); });
}
