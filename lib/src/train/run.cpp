#include "attn/train/run.h"

#include <stdlib.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <torch/script.h>

#include "attn/io/atomic_file.h"
#include "attn/io/json_like.h"
#include "attn/models/ensemble.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/parallel/workers.h"
#include "attn/tasks/task.h"
#include "word_vectors.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

std::string describe_model(const models::ModelEntry& entry) { return entry.name + " (a " + tasks::task_for(entry.kind).name() + " model)"; }

}  // namespace

struct TrainingRun::Impl {
  std::string dir;
  RunConfig config;
  const models::ModelEntry* entry = nullptr;  // config.model's, found once
  parallel::Workers* workers = nullptr;
  bool writes = true;   // rank 0 (or the only process) writes the run directory
  std::string scratch;  // the other workers' private directory for what reading the data writes

  ~Impl() {
    std::error_code ignored;
    if (!scratch.empty()) fs::remove_all(scratch, ignored);
  }

  /// Joins `w` (may be null): workers after rank 0 write nothing to the run directory.
  void join(parallel::Workers* w) {
    workers = w;
    writes = !w || w->rank() == 0;
    if (writes) return;
    std::string pattern = (fs::temp_directory_path() / "attn-worker-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error(pattern + ": cannot create a directory for worker " + std::to_string(w->rank()));
    scratch = pattern;
  }
  /// Where reading the data may write (RUN_DIR, or a worker's scratch directory).
  const std::string& data_dir() const { return writes ? dir : scratch; }
  std::unique_ptr<tasks::Dataset> data, validation;
  std::unique_ptr<Trainer> trainer;  // trains the model's native build (attn's kernels: nn::Runtime)
  torch::jit::Module portable;       // the portable build, what model.pt holds: the trainer's weights copied in
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();

  std::string path(const char* name) const { return (fs::path(dir) / name).string(); }
  std::vector<std::string> pretraining_texts;  // a new run's (--pretrain-epochs), until the model starts from them

  /// --logit-adjustment macro-f1, once training is done: model.pt (the best epoch) gets the offsets
  /// that maximise the held-out rows' macro-F1 added to its output bias, recorded in config.json.
  void adjust_logits() {
    const models::ModelEntry& entry = *this->entry;
    models::SavedModel best = models::load_model(path("model.pt"), nn::Runtime::kPortable);
    const metrics::LogitAdjustment a = trainer->logit_offsets(best.module);
    if (a.offsets.empty()) return;
    torch::Tensor bias = models::output_bias(entry, best.module);
    if (!bias.defined() || bias.numel() != static_cast<std::int64_t>(a.offsets.size()))
      throw std::logic_error(entry.name + ": no output bias '" + entry.output_bias + "' with one value per class");
    {
      torch::NoGradGuard no_grad;
      bias.add_(torch::tensor(std::vector<float>(a.offsets.begin(), a.offsets.end())));
    }
    const std::vector<std::string> classes = data->data_config().at("labels").get<std::vector<std::string>>();  // (a tagger's one)
    nlohmann::ordered_json offsets;
    for (std::size_t k = 0; k < classes.size(); ++k) offsets[classes[k]] = std::round(a.offsets[k] * 10) / 10;
    config.logit_adjustment = {{"offsets", offsets}, {a.metric + "_before", a.before}, {a.metric + "_after", a.after}};
    io::write_file_atomic(path("config.json"), nlohmann::json(config).dump(2) + "\n");
    models::save_model(path("model.pt"), best.module, nlohmann::json(config), data->files());
  }

  /// Builds the model (the seed's initial weights; a new run's word vectors) and the trainer.
  enum class Start { kNewRun, kResumed };
  void open_trainer(Start start) {
    const models::ModelEntry& entry = *this->entry;
    config.model_revision = entry.revision;    // the registry's model is what trains, also on --resume
    torch::manual_seed(config.training.seed);  // the initial weights
    const nlohmann::json model_config = models::resolve_config(entry, config.model_config);
    const TrainOptions& t = config.training;
    torch::jit::Module model = models::build_model(entry, model_config, t.ensemble, nn::Runtime::kNative);
    portable = models::build_model(entry, model_config, t.ensemble, nn::Runtime::kPortable);
    if (start == Start::kNewRun && !t.embeddings.empty()) config.embeddings = load_word_vectors(model, entry, *data, t.embeddings);
    if (start == Start::kNewRun && t.pretrain_epochs > 0 && writes) {  // the other workers start from rank 0's weights
      config.embeddings = pretrain_word_vectors(model, entry, *data, pretraining_texts, t);
      pretraining_texts = {};
    }
    if (t.freeze_embeddings)
      for (torch::jit::Module& m : models::ensemble_members(model)) m.attr(entry.word_embedding).toTensor().set_requires_grad(false);
    // (an ensemble's word tables are its members': the workers exchange their whole gradients)
    trainer = std::make_unique<Trainer>(model, *data, validation.get(), t, workers, t.ensemble == 1 ? entry.word_embedding : "");
  }
};

TrainingRun::TrainingRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrainingRun::TrainingRun(TrainingRun&&) noexcept = default;
TrainingRun::~TrainingRun() = default;

TrainingRun TrainingRun::start(const TrainRequest& r) {
  const TrainingPlan plan = plan_training(r);  // every setting checked before any work
  const models::ModelEntry& entry = *plan.entry;
  const tasks::Task& task = *plan.task;
  data::require_declared(r.data, task.inputs(tasks::Command::kTrain), describe_model(entry));
  if (r.out_dir.empty()) throw std::invalid_argument("--out is required");
  // torchrun restarted the group after a failure: the same command line continues the run.
  if (r.workers && r.workers->place().restart_count > 0 && fs::exists(fs::path(r.out_dir) / "checkpoint.pt"))
    return resume(r.out_dir, nlohmann::json::object(), r.workers);
  auto s = std::make_unique<Impl>();
  s->dir = r.out_dir;
  s->join(r.workers);
  const bool restarted = r.workers && r.workers->place().restart_count > 0;  // before its first checkpoint
  if (s->writes && !restarted && fs::exists(fs::path(r.out_dir) / "config.json"))
    throw std::runtime_error(r.out_dir + ": already holds a run (config.json); continue it with --resume, or choose another --out");
  s->entry = &entry;
  s->config.model = entry.name;
  s->config.task = task.name();
  s->config.training = plan.training;
  if (s->writes) io::ensure_directory(r.out_dir);
  const int threads = s->config.training.threads;
  s->data = task.open(r.data, entry, s->data_dir(), threads);
  if (r.data.given("val-csv")) s->validation = task.open_validation(r.data.text("val-csv"), *s->data, s->data_dir(), threads);
  // The model's sizes follow the data (vocabularies, labels, features, lengths) unless set explicitly.
  s->config.model_config = models::fit_config(entry, r.model_overrides, s->data->sizes());
  s->config.data = s->data->data_config();
  if (const std::string& a = s->config.training.logit_adjustment; a != "none") {
    if (a != s->data->logit_adjustment())
      throw std::invalid_argument(
          "--logit-adjustment " + a + " does not apply to this data (" +
          (s->data->logit_adjustment().empty() ? std::string("it takes none") : "it takes " + s->data->logit_adjustment()) +
          "; macro-f1: one class per row, --label-column; span-f1: a span tagger)");
    if (entry.output_bias.empty()) throw std::invalid_argument("--logit-adjustment: " + entry.name + " has no output bias to move");
  }
  if (s->validation) s->config.validation = s->validation->data_config();
  if (s->config.training.pretrain_epochs > 0 && s->writes) s->pretraining_texts = task.unlabelled_texts(r.data);
  s->open_trainer(Impl::Start::kNewRun);
  if (s->writes) {
    io::write_file_atomic(s->path("config.json"), nlohmann::json(s->config).dump(2) + "\n");
    for (const auto& [name, content] : s->data->files()) io::write_file_atomic(s->path(name.c_str()), content);
  }
  return TrainingRun(std::move(s));
}

TrainingRun TrainingRun::resume(const std::string& run_dir, const nlohmann::json& training, parallel::Workers* workers) {
  for (const auto& [key, value] : training.items())
    if (key != "epochs") throw std::invalid_argument("--resume continues with the run's own settings; only --epochs may change");
  auto s = std::make_unique<Impl>();
  s->dir = run_dir;
  s->join(workers);
  const std::string cfg = s->path("config.json");
  try {
    s->config = io::get_like<RunConfig>(nlohmann::json::parse(io::read_file(cfg)));
  } catch (const std::exception& e) {
    throw std::runtime_error(cfg + ": not a run configuration (" + e.what() + ")");
  }
  if (s->config.model.empty()) throw std::runtime_error(cfg + ": not a run configuration (no \"model\")");
  if (training.contains("epochs")) {
    if (!training["epochs"].is_number_integer()) throw std::invalid_argument("--epochs must be a whole number");
    s->config.training.epochs = training["epochs"];
  }
  validate(s->config.training);
  s->entry = &models::find_model(s->config.model);
  const tasks::Task& task = tasks::task_for(s->entry->kind);
  s->data = task.reopen(s->config.data, run_dir, s->config.training.threads);
  if (!s->config.validation.is_null()) s->validation = task.reopen(s->config.validation, run_dir, s->config.training.threads);
  // The split and the batches follow the data: a changed file would not resume exactly.
  const nlohmann::json now = s->data->data_config();
  for (const auto& [key, value] : s->config.data.items())
    if (now.contains(key) && now[key] != value)
      throw std::runtime_error(cfg + ": data." + key + " was " + value.dump() + " when the run started, the data now gives " +
                               now[key].dump() + ": it changed since; start a new run");
  s->open_trainer(Impl::Start::kResumed);  // the checkpoint holds the weights, word vectors included
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
  if (s->writes) io::write_file_atomic(cfg, nlohmann::json(s->config).dump(2) + "\n");
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
  const std::string model = s.config.model + (t.ensemble > 1 ? " (an ensemble of " + std::to_string(t.ensemble) + ")" : "");
  std::snprintf(line, sizeof line, "training %s on %lld rows, %d epochs, batch %lld, %s batches, lr %g, %d threads -> %s\n", model.c_str(),
                static_cast<long long>(s.data->rows()), t.epochs, static_cast<long long>(t.batch_size),
                fixed      ? "shuffled"
                : t.bucket ? "length-bucketed"
                           : "maxlen-padded",
                t.lr, t.threads, s.dir.c_str());
  std::string out = line;
  if (s.validation)
    out += "validating on " + std::to_string(s.validation->rows()) + " rows of " +
           s.config.validation.value("csv", s.config.validation.value("dir", std::string())) + "\n";
  if (!s.config.embeddings.is_null()) out += word_vectors_line(s.config.embeddings, t.freeze_embeddings);
  return out;
}

bool TrainingRun::train(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                        const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  const bool keep_best = s.config.training.early_stopping_patience > 0;
  const bool finished = s.trainer->run(stop, on_progress, [&](const EpochRecord& rec) {
    if (s.writes) {
      s.metrics.push_back(to_json(rec));
      std::string lines;
      for (const auto& m : s.metrics) lines += m.dump() + "\n";
      s.trainer->save_checkpoint(s.path("checkpoint.pt"));  // always the last epoch: --resume continues from it
      io::write_file_atomic(s.path("metrics.jsonl"), lines, io::Durability::kToDisk);
      // model.pt: the last epoch, or with early stopping the best one by --monitor.
      if (!keep_best || rec.best) {
        models::copy_weights(s.trainer->model(), s.portable);
        models::save_model(s.path("model.pt"), s.portable, nlohmann::json(s.config), s.data->files());
      }
    }
    if (on_epoch) on_epoch(rec);
  });
  if (!finished && s.writes) s.trainer->save_checkpoint(s.path("checkpoint.pt"));
  if (finished && s.writes && s.config.training.logit_adjustment != "none") s.adjust_logits();
  return finished;
}

}  // namespace attn::train
