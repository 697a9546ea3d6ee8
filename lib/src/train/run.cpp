#include "attn/train/run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <torch/torch.h>

#include "attn/io/atomic_file.h"
#include "attn/io/threads.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/tasks/task.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

TrainOptions effective_options(const models::TrainingDefaults& d, const TrainingFlags& f) {
  TrainOptions o;
  o.epochs = f.epochs.value_or(d.epochs);
  o.batch_size = f.batch_size.value_or(d.batch_size);
  o.val_split = f.val_split.value_or(d.val_split);
  o.lr = f.lr.value_or(d.lr);
  o.seed = f.seed.value_or(0);
  o.bucket = f.bucket.value_or(true);
  o.threads = f.threads.value_or(1);
  validate(o);
  return o;
}

std::string describe_model(const models::ModelEntry& entry) {
  return entry.name + " (a " + tasks::task_for(entry.kind).name() + " model)";
}

}  // namespace

nlohmann::ordered_json planned_config(const TrainRequest& r) {
  const models::ModelEntry& entry = models::find_model(r.model);
  const nlohmann::json model_config = models::resolve_config(entry, r.model_overrides);
  entry.build(model_config);  // a bad value fails here, before any data is read
  nlohmann::ordered_json j;
  j["model"] = entry.name;
  j["task"] = tasks::task_for(entry.kind).name();
  j["model_config"] = model_config;
  j["training"] = nlohmann::json(effective_options(entry.training, r.training));
  return j;
}

struct TrainingRun::Impl {
  std::string dir;
  RunConfig config;
  std::unique_ptr<tasks::Dataset> data;
  std::unique_ptr<Trainer> trainer;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();

  std::string path(const char* name) const { return (fs::path(dir) / name).string(); }

  void open_trainer() {
    io::set_torch_threads(config.training.threads);
    const models::ModelEntry& entry = models::find_model(config.model);
    torch::manual_seed(config.training.seed);  // the initial weights
    trainer = std::make_unique<Trainer>(entry.build(models::resolve_config(entry, config.model_config)), *data, config.training);
  }
};

TrainingRun::TrainingRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrainingRun::TrainingRun(TrainingRun&&) noexcept = default;
TrainingRun::~TrainingRun() = default;

TrainingRun TrainingRun::start(const TrainRequest& r) {
  const models::ModelEntry& entry = models::find_model(r.model);
  const tasks::Task& task = tasks::task_for(entry.kind);
  planned_config(r);  // every setting checked before any work
  data::require_declared(r.data, task.inputs(tasks::Command::kTrain), describe_model(entry));
  if (r.out_dir.empty()) throw std::invalid_argument("--out is required");
  if (fs::exists(fs::path(r.out_dir) / "config.json"))
    throw std::runtime_error(r.out_dir + ": already holds a run (config.json); continue it with --resume, or choose another --out");
  auto s = std::make_unique<Impl>();
  s->dir = r.out_dir;
  s->config.model = entry.name;
  s->config.task = task.name();
  s->config.training = effective_options(entry.training, r.training);
  io::set_torch_threads(s->config.training.threads);
  io::ensure_directory(r.out_dir);
  s->data = task.open(r.data, r.out_dir, s->config.training.threads);
  // The model's sizes follow the data (vocabularies, labels, features, lengths) unless set explicitly.
  s->config.model_config = models::fit_config(entry, r.model_overrides, s->data->sizes());
  s->config.data = s->data->data_config();
  io::write_file_atomic(s->path("config.json"), nlohmann::json(s->config).dump(2) + "\n");
  for (const auto& [name, content] : s->data->files()) io::write_file_atomic(s->path(name.c_str()), content);
  s->open_trainer();
  return TrainingRun(std::move(s));
}

TrainingRun TrainingRun::resume(const std::string& run_dir, const TrainingFlags& flags) {
  if (flags.batch_size || flags.val_split || flags.lr || flags.seed || flags.bucket || flags.threads)
    throw std::invalid_argument("--resume continues with the run's own settings; only --epochs may change");
  auto s = std::make_unique<Impl>();
  s->dir = run_dir;
  const std::string cfg = s->path("config.json");
  try {
    s->config = nlohmann::json::parse(io::read_file(cfg)).get<RunConfig>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(cfg + ": not a run configuration (" + e.what() + ")");
  }
  if (flags.epochs) s->config.training.epochs = *flags.epochs;
  validate(s->config.training);
  const tasks::Task& task = tasks::task_for(models::find_model(s->config.model).kind);
  s->data = task.reopen(s->config.data, run_dir, s->config.training.threads);
  // The split and the batches follow the data: a changed file would not resume exactly.
  const nlohmann::json now = s->data->data_config();
  for (const auto& [key, value] : s->config.data.items())
    if (now.contains(key) && now[key] != value)
      throw std::runtime_error(cfg + ": data." + key + " was " + value.dump() + " when the run started, the data now gives " +
                               now[key].dump() + ": it changed since; start a new run");
  s->open_trainer();
  s->trainer->load_checkpoint(s->path("checkpoint.pt"));
  if (fs::exists(s->path("metrics.jsonl"))) {
    const std::string text = io::read_file(s->path("metrics.jsonl"));
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty()) s->metrics.push_back(nlohmann::ordered_json::parse(line));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    // Records beyond the checkpoint (a crash between the two writes) are dropped.
    while (!s->metrics.empty() && s->metrics.back().at("epoch").get<int>() > s->trainer->epochs_done())
      s->metrics.erase(s->metrics.size() - 1);
  }
  io::write_file_atomic(cfg, nlohmann::json(s->config).dump(2) + "\n");
  return TrainingRun(std::move(s));
}

const RunConfig& TrainingRun::config() const { return impl_->config; }
int TrainingRun::epochs_done() const { return impl_->trainer->epochs_done(); }

std::string TrainingRun::describe() const {
  const Impl& s = *impl_;
  const TrainOptions& t = s.config.training;
  const auto& lengths = s.data->lengths();
  const bool fixed = std::all_of(lengths.begin(), lengths.end(), [&](std::int64_t l) { return l == lengths.front(); });
  char line[512];
  std::snprintf(line, sizeof line, "training %s on %lld rows, %d epochs, batch %lld, %s batches, lr %g, %d threads -> %s\n",
                s.config.model.c_str(), static_cast<long long>(s.data->rows()), t.epochs, static_cast<long long>(t.batch_size),
                fixed ? "shuffled" : t.bucket ? "length-bucketed" : "maxlen-padded", t.lr, t.threads, s.dir.c_str());
  return line;
}

bool TrainingRun::train(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                        const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  const bool finished = s.trainer->run(stop, on_progress, [&](const EpochRecord& rec) {
    s.metrics.push_back(to_json(rec));
    std::string lines;
    for (const auto& m : s.metrics) lines += m.dump() + "\n";
    s.trainer->save_checkpoint(s.path("checkpoint.pt"));
    io::write_file_atomic(s.path("metrics.jsonl"), lines);
    models::save_model(s.path("model.pt"), s.trainer->model(), nlohmann::json(s.config), s.data->files());
    if (on_epoch) on_epoch(rec);
  });
  if (!finished) s.trainer->save_checkpoint(s.path("checkpoint.pt"));
  return finished;
}

std::string format_progress(const Progress& p) {
  const double frac = p.rows_total ? static_cast<double>(p.rows_done) / static_cast<double>(p.rows_total) : 1;
  const int width = 30, filled = static_cast<int>(frac * width);
  const double rate = p.seconds > 0 ? static_cast<double>(p.rows_done) / p.seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(p.rows_total - p.rows_done) / rate : 0;
  char line[256];
  std::snprintf(line, sizeof line, "\repoch %d/%d [%s%s] %lld/%lld  %.0f rows/s  ETA %.0f s  loss %.4f  acc %.4f   %s", p.epoch,
                p.epochs, std::string(static_cast<std::size_t>(filled), '=').c_str(),
                std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), static_cast<long long>(p.rows_done),
                static_cast<long long>(p.rows_total), rate, eta, p.loss, p.accuracy, p.rows_done >= p.rows_total ? "\n" : "");
  return line;
}

std::string format_epoch(const EpochRecord& e, int epochs) {
  std::string line = "epoch " + std::to_string(e.epoch) + "/" + std::to_string(epochs), groups;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  loss %.4f  accuracy %.4f", e.loss, e.accuracy);
  line += buf;
  for (const auto& [key, value] : e.validation.items()) {
    if (key == "rows" || key == "rows_skipped") continue;  // counts, not metrics
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
  std::snprintf(buf, sizeof buf, "  (%.1f s, %.0f rows/s)\n", e.seconds, e.rows_per_second);
  return line + buf + groups;
}

}  // namespace attn::train
