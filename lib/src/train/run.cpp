#include "attn/train/run.h"

#include <algorithm>
#include <filesystem>

#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"

namespace attn::train {

namespace fs = std::filesystem;

torch::jit::Module build_model(const nlohmann::json& config) {
  const models::ModelEntry& entry = models::find_model(config.at("model").get<std::string>());
  return entry.build(models::resolve_config(entry, config.at("model_config")));
}

struct TrainingRun::Impl {
  std::string dir;
  nlohmann::json config;
  std::unique_ptr<Task> task;
  std::unique_ptr<Trainer> trainer;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();

  std::string path(const char* name) const { return (fs::path(dir) / name).string(); }

  void open_trainer() {
    TrainOptions t;
    const auto& c = config.at("training");
    t.epochs = c.at("epochs");
    t.batch_size = c.at("batch_size");
    t.val_split = c.at("val_split");
    t.lr = c.at("lr");
    t.seed = c.at("seed");
    t.bucket = c.at("bucket");
    torch::manual_seed(t.seed);  // the initial weights
    trainer = std::make_unique<Trainer>(build_model(config), *task, t);
  }
};

TrainingRun::TrainingRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrainingRun::TrainingRun(TrainingRun&&) noexcept = default;
TrainingRun::~TrainingRun() = default;

TrainingRun TrainingRun::start(const RunOptions& o) {
  auto s = std::make_unique<Impl>();
  s->dir = o.out_dir;
  const models::ModelEntry& entry = models::find_model(o.model);
  if (fs::exists(fs::path(o.out_dir) / "config.json"))
    throw std::runtime_error(o.out_dir + ": already holds a run (config.json); continue it with --resume, or choose another --out");
  io::ensure_directory(o.out_dir);
  DataSource source = o.data;
  source.threads = o.threads;
  s->task = open_task(entry.task, source, o.out_dir);
  // The model's sizes follow the data (vocabularies, labels, features, lengths) unless set
  // explicitly: counts the data fixes must equal it, limits (vocabulary rows, lengths) may be larger.
  nlohmann::json overrides = o.model_overrides.is_null() ? nlohmann::json::object() : o.model_overrides;
  const nlohmann::json sizes = s->task->model_sizes();
  for (const auto& [key, value] : sizes.items()) {
    const bool known = std::any_of(entry.keys.begin(), entry.keys.end(), [&](const models::ConfigKey& k) { return k.name == key; });
    if (!known) continue;
    if (!overrides.contains(key)) overrides[key] = value;
    const bool exact = key == "labels" || key == "features" || key == "source_vocab" || key == "target_vocab";
    if (!overrides[key].is_number_integer() || (exact ? overrides[key] != value : overrides[key] < value))
      throw std::invalid_argument("config key '" + key + "' must be " + (exact ? "" : "at least ") + "the data's " +
                                  value.dump() + ", got " + overrides[key].dump());
  }
  s->config = {{"format", "attn.run/1"},
               {"model", entry.name},
               {"task", models::task_name(entry.task)},
               {"model_config", models::resolve_config(entry, overrides)},
               {"training",
                {{"epochs", o.train.epochs},
                 {"batch_size", o.train.batch_size},
                 {"val_split", o.train.val_split},
                 {"lr", o.train.lr},
                 {"seed", o.train.seed},
                 {"bucket", o.train.bucket},
                 {"threads", o.threads}}},
               {"data", s->task->data_config()}};
  io::write_file_atomic(s->path("config.json"), s->config.dump(2) + "\n");
  for (const auto& [name, content] : s->task->files()) io::write_file_atomic(s->path(name.c_str()), content);
  s->open_trainer();
  return TrainingRun(std::move(s));
}

TrainingRun TrainingRun::resume(const std::string& run_dir, std::optional<int> epochs) {
  auto s = std::make_unique<Impl>();
  s->dir = run_dir;
  const std::string cfg = s->path("config.json");
  try {
    s->config = nlohmann::json::parse(io::read_file(cfg));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(cfg + ": not valid JSON");
  }
  if (epochs) s->config["training"]["epochs"] = *epochs;
  try {
    s->task = reopen_task(models::find_model(s->config.at("model")).task, s->config, run_dir);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(cfg + ": incomplete run configuration (" + e.what() + ")");
  }
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
  io::write_file_atomic(cfg, s->config.dump(2) + "\n");
  return TrainingRun(std::move(s));
}

const nlohmann::json& TrainingRun::config() const { return impl_->config; }
int TrainingRun::epochs_done() const { return impl_->trainer->epochs_done(); }

bool TrainingRun::train(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                        const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  const bool finished = s.trainer->run(stop, on_progress, [&](const EpochRecord& rec) {
    s.metrics.push_back(to_json(rec));
    std::string lines;
    for (const auto& m : s.metrics) lines += m.dump() + "\n";
    s.trainer->save_checkpoint(s.path("checkpoint.pt"));
    io::write_file_atomic(s.path("metrics.jsonl"), lines);
    models::save_model(s.path("model.pt"), s.trainer->model(), s.config, s.task->files());
    if (on_epoch) on_epoch(rec);
  });
  if (!finished) s.trainer->save_checkpoint(s.path("checkpoint.pt"));
  return finished;
}

}  // namespace attn::train
