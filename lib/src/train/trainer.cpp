#include "attn/train/trainer.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/torch.h>

#include "attn/io/atomic_file.h"

namespace attn::train {

void validate(const TrainOptions& o) {
  if (o.epochs < 1) throw std::invalid_argument("--epochs must be >= 1, got " + std::to_string(o.epochs));
  if (o.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1, got " + std::to_string(o.batch_size));
  if (!(o.lr > 0)) throw std::invalid_argument("--lr must be > 0, got " + std::to_string(o.lr));
  if (!(o.val_split >= 0 && o.val_split < 1)) throw std::invalid_argument("--val-split must be in [0, 1), got " + std::to_string(o.val_split));
  if (o.threads < 1) throw std::invalid_argument("--threads must be >= 1, got " + std::to_string(o.threads));
}

nlohmann::ordered_json to_json(const EpochRecord& r) {
  nlohmann::ordered_json j;
  j["epoch"] = r.epoch;
  j["loss"] = r.loss;
  j["accuracy"] = r.accuracy;
  for (const auto& [key, value] : r.validation.items()) j["val_" + key] = value;
  j["train_rows"] = r.train_rows;
  j["train_tokens"] = r.train_tokens;
  j["seconds"] = r.seconds;
  j["rows_per_second"] = r.rows_per_second;
  return j;
}

namespace {

/// checkpoint.pt's "state": where training stands.
struct CheckpointState {
  std::string format = "attn.checkpoint/1";
  std::vector<std::string> parameters;  ///< names, in the order of the param_N tensors
  int epoch = 0;                        ///< epochs done
  std::int64_t next_batch = 0, rows_done = 0, tokens_done = 0;
  double loss_sum = 0, acc_sum = 0, seconds = 0;  ///< the epoch's running sums so far
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CheckpointState, format, parameters, epoch, next_batch, rows_done, tokens_done, loss_sum, acc_sum,
                                   seconds)

}  // namespace

struct Trainer::Impl {
  // TorchScript's executor swaps in an optimised graph after a module's first runs, which can
  // change the last bits of a result: a resumed run (a fresh module) would drift from an
  // uninterrupted one. Unoptimised while training, every step runs the same graph.
  torch::jit::GraphOptimizerEnabledGuard unoptimized{false};
  torch::jit::Module model;
  const tasks::Dataset& data;
  TrainOptions options;
  std::vector<torch::Tensor> params;
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::vector<std::int64_t> train_rows, val_rows;
  CheckpointState state;  // the position: the next batch of epoch state.epoch (0-based), with the running sums

  Impl(torch::jit::Module m, const tasks::Dataset& d, const TrainOptions& o) : model(std::move(m)), data(d), options(o) {
    train::validate(o);
    for (const auto& p : model.named_parameters(true)) {
      params.push_back(p.value);
      state.parameters.push_back(p.name);
    }
    optimizer = std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(o.lr).betas({0.9, 0.999}).eps(1e-7));
    const auto n = data.rows();
    const auto n_val = static_cast<std::int64_t>(std::floor(static_cast<double>(n) * o.val_split));  // Keras' split
    for (std::int64_t r = 0; r < n - n_val; ++r) train_rows.push_back(r);
    for (std::int64_t r = n - n_val; r < n; ++r) val_rows.push_back(r);
    if (train_rows.empty()) throw std::runtime_error("no training rows left after the validation split (" + std::to_string(n) + " rows)");
  }

  std::vector<std::vector<std::int64_t>> epoch_batches(int e) const {
    const tasks::BatchPlan plan{options.batch_size, options.bucket ? tasks::BatchPlan::Grouping::kByLength : tasks::BatchPlan::Grouping::kAsGiven,
                                options.seed * 1000003ULL + static_cast<std::uint64_t>(e)};
    return tasks::make_batches(train_rows, data.lengths(), plan);
  }

  nlohmann::ordered_json validate() {
    return data.evaluate(model, val_rows, {options.batch_size, tasks::EvaluateOptions::Detail::kMetrics}).metrics;
  }
};

Trainer::Trainer(torch::jit::Module model, const tasks::Dataset& data, const TrainOptions& options)
    : impl_(std::make_unique<Impl>(std::move(model), data, options)) {}
Trainer::~Trainer() = default;

int Trainer::epochs_done() const { return impl_->state.epoch; }
torch::jit::Module& Trainer::model() { return impl_->model; }
nlohmann::ordered_json Trainer::validate() { return impl_->validate(); }

bool Trainer::run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                  const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  CheckpointState& p = s.state;
  const tasks::Width width = s.options.bucket ? tasks::Width::kLongestRow : tasks::Width::kData;
  while (p.epoch < s.options.epochs) {
    const auto batches = s.epoch_batches(p.epoch);
    s.model.train();
    for (; p.next_batch < static_cast<std::int64_t>(batches.size()); ++p.next_batch) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto& rows = batches[static_cast<std::size_t>(p.next_batch)];
      // Dropout masks from (seed, epoch, batch): a resumed run draws exactly the same ones.
      torch::manual_seed(s.options.seed * 1000003ULL + static_cast<std::uint64_t>(p.epoch) * 100003ULL + static_cast<std::uint64_t>(p.next_batch));
      const tasks::Batch batch = s.data.batch(rows, width);
      const tasks::Loss loss = s.data.loss(s.model, batch);
      s.optimizer->zero_grad();
      loss.value.backward();
      s.optimizer->step();
      const auto n = static_cast<double>(rows.size());
      p.loss_sum += loss.value.item<double>() * n;
      p.acc_sum += loss.accuracy * n;
      p.rows_done += static_cast<std::int64_t>(rows.size());
      p.tokens_done += batch.tokens;
      p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (on_progress)
        on_progress(Progress{p.epoch + 1, s.options.epochs, p.rows_done, static_cast<std::int64_t>(s.train_rows.size()), p.seconds,
                             p.loss_sum / static_cast<double>(p.rows_done), p.acc_sum / static_cast<double>(p.rows_done)});
      if (stop.load()) {
        ++p.next_batch;
        return false;
      }
    }
    EpochRecord rec;
    rec.epoch = p.epoch + 1;
    rec.loss = p.loss_sum / static_cast<double>(p.rows_done);
    rec.accuracy = p.acc_sum / static_cast<double>(p.rows_done);
    rec.seconds = p.seconds;
    rec.rows_per_second = static_cast<double>(p.rows_done) / p.seconds;
    rec.train_rows = p.rows_done;
    rec.train_tokens = p.tokens_done;
    rec.validation = s.validate();
    ++p.epoch;  // done: a checkpoint written by on_epoch starts the next epoch
    p.next_batch = p.rows_done = p.tokens_done = 0;
    p.loss_sum = p.acc_sum = p.seconds = 0;
    if (on_epoch) on_epoch(rec);
  }
  return true;
}

void Trainer::save_checkpoint(const std::string& path) const {
  const Impl& s = *impl_;
  torch::serialize::OutputArchive archive;
  for (std::size_t i = 0; i < s.params.size(); ++i) archive.write("param_" + std::to_string(i), s.params[i]);
  torch::serialize::OutputArchive optim;
  s.optimizer->save(optim);
  archive.write("optimizer", optim);
  archive.write("state", c10::IValue(nlohmann::json(s.state).dump()));
  io::write_atomic(path, [&](const std::string& tmp) { archive.save_to(tmp); });
}

void Trainer::load_checkpoint(const std::string& path) {
  Impl& s = *impl_;
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a checkpoint (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  c10::IValue state_value;
  if (!archive.try_read("state", state_value) || !state_value.isString())
    throw std::runtime_error(path + ": key 'state' missing: not an attn checkpoint");
  CheckpointState state;
  try {
    state = nlohmann::json::parse(state_value.toStringRef()).get<CheckpointState>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": key 'state': " + e.what());
  }
  if (state.parameters != s.state.parameters)
    throw std::runtime_error(path + ": key 'parameters': the checkpoint's parameters do not match this model");
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    torch::Tensor t;
    archive.read("param_" + std::to_string(i), t);
    if (!t.sizes().equals(s.params[i].sizes()))
      throw std::runtime_error(path + ": parameter '" + state.parameters[i] + "' has another shape");
    s.params[i].copy_(t);
  }
  torch::serialize::InputArchive optim;
  archive.read("optimizer", optim);
  s.optimizer->load(optim);
  s.state = state;
}

}  // namespace attn::train
