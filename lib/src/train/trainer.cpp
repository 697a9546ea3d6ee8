#include "attn/train/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/torch.h>

#include "attn/train/batching.h"

namespace attn::train {

nlohmann::ordered_json to_json(const EpochRecord& r) {
  nlohmann::ordered_json j;
  j["epoch"] = r.epoch;
  j["loss"] = r.loss;
  j["acc"] = r.accuracy;
  for (const auto& [key, value] : r.validation.items()) j["val_" + key] = value;
  j["train_rows"] = r.train_rows;
  j["val_rows"] = r.val_rows;
  j["train_tokens"] = r.train_tokens;
  j["seconds"] = r.seconds;
  j["rows_per_second"] = r.rows_per_second;
  return j;
}

struct Trainer::Impl {
  torch::jit::Module model;
  const Task& task;
  TrainOptions options;
  std::vector<torch::Tensor> params;
  std::vector<std::string> param_names;
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::vector<std::int64_t> train_rows, val_rows;
  // Position: the next batch of epoch `epoch` (0-based), with the epoch's running sums so far.
  int epoch = 0;
  std::int64_t next_batch = 0, rows_done = 0, tokens_done = 0;
  double loss_sum = 0, acc_sum = 0, seconds = 0;

  Impl(torch::jit::Module m, const Task& t, const TrainOptions& o) : model(std::move(m)), task(t), options(o) {
    // TorchScript's executor swaps in an optimised graph after a module's first runs, which can
    // change the last bits of a result: a resumed run (a fresh module) would drift from an
    // uninterrupted one. Unoptimised, every step runs the same graph (process-wide setting).
    torch::jit::setGraphExecutorOptimize(false);
    if (o.val_split < 0 || o.val_split >= 1) throw std::invalid_argument("val_split must be in [0, 1)");
    if (o.epochs < 1) throw std::invalid_argument("epochs must be >= 1");
    for (const auto& p : model.named_parameters(true)) {
      params.push_back(p.value);
      param_names.push_back(p.name);
    }
    optimizer = std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(o.lr).betas({0.9, 0.999}).eps(1e-7));
    const auto n = task.rows();
    const auto n_val = static_cast<std::int64_t>(std::floor(static_cast<double>(n) * o.val_split));  // Keras' split
    for (std::int64_t r = 0; r < n - n_val; ++r) train_rows.push_back(r);
    for (std::int64_t r = n - n_val; r < n; ++r) val_rows.push_back(r);
    if (train_rows.empty()) throw std::invalid_argument("no training rows left after the validation split");
  }

  std::vector<std::vector<std::int64_t>> epoch_batches(int e) const {
    return make_batches(train_rows, task.lengths(), options.batch_size, options.bucket, true,
                        options.seed * 1000003ULL + static_cast<std::uint64_t>(e));
  }

  nlohmann::ordered_json validate() { return task.evaluate(model, val_rows, options.batch_size); }
};

Trainer::Trainer(torch::jit::Module model, const Task& task, const TrainOptions& options)
    : impl_(std::make_unique<Impl>(std::move(model), task, options)) {}
Trainer::~Trainer() = default;

int Trainer::epochs_done() const { return impl_->epoch; }
torch::jit::Module& Trainer::model() { return impl_->model; }
nlohmann::ordered_json Trainer::validate() { return impl_->validate(); }

bool Trainer::run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                  const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  while (s.epoch < s.options.epochs) {
    const auto batches = s.epoch_batches(s.epoch);
    s.model.train();
    for (; s.next_batch < static_cast<std::int64_t>(batches.size()); ++s.next_batch) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto& rows = batches[static_cast<std::size_t>(s.next_batch)];
      // Dropout masks from (seed, epoch, batch): a resumed run draws exactly the same ones.
      torch::manual_seed(s.options.seed * 1000003ULL + static_cast<std::uint64_t>(s.epoch) * 100003ULL +
                         static_cast<std::uint64_t>(s.next_batch));
      const Batch batch = s.task.batch(rows, s.options.bucket);
      const auto [loss, accuracy] = s.task.loss(s.model, batch);
      s.optimizer->zero_grad();
      loss.backward();
      s.optimizer->step();
      const auto n = static_cast<double>(rows.size());
      s.loss_sum += loss.item<double>() * n;
      s.acc_sum += accuracy * n;
      s.rows_done += static_cast<std::int64_t>(rows.size());
      s.tokens_done += batch.tokens;
      s.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (on_progress)
        on_progress(Progress{s.epoch + 1, s.options.epochs, s.rows_done, static_cast<std::int64_t>(s.train_rows.size()),
                             s.seconds, s.loss_sum / static_cast<double>(s.rows_done), s.acc_sum / static_cast<double>(s.rows_done)});
      if (stop.load()) {
        ++s.next_batch;
        return false;
      }
    }
    EpochRecord rec;
    rec.epoch = s.epoch + 1;
    rec.loss = s.loss_sum / static_cast<double>(s.rows_done);
    rec.accuracy = s.acc_sum / static_cast<double>(s.rows_done);
    rec.seconds = s.seconds;
    rec.rows_per_second = static_cast<double>(s.rows_done) / s.seconds;
    rec.train_rows = s.rows_done;
    rec.train_tokens = s.tokens_done;
    rec.validation = s.validate();
    rec.val_rows = static_cast<std::int64_t>(s.val_rows.size());
    ++s.epoch;  // done: a checkpoint written by on_epoch starts the next epoch
    s.next_batch = s.rows_done = s.tokens_done = 0;
    s.loss_sum = s.acc_sum = s.seconds = 0;
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
  const nlohmann::json state = {{"format", "attn.checkpoint/1"}, {"parameters", s.param_names}, {"epoch", s.epoch},
                                {"next_batch", s.next_batch}, {"rows_done", s.rows_done}, {"tokens_done", s.tokens_done},
                                {"loss_sum", s.loss_sum}, {"acc_sum", s.acc_sum}, {"seconds", s.seconds}};
  archive.write("state", c10::IValue(state.dump()));
  const std::string tmp = path + ".tmp";
  archive.save_to(tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error(path + ": cannot write checkpoint");
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
  const nlohmann::json state = nlohmann::json::parse(state_value.toStringRef());
  if (state.value("parameters", std::vector<std::string>{}) != s.param_names)
    throw std::runtime_error(path + ": key 'parameters': the checkpoint's parameters do not match this model");
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    torch::Tensor t;
    archive.read("param_" + std::to_string(i), t);
    if (!t.sizes().equals(s.params[i].sizes()))
      throw std::runtime_error(path + ": parameter '" + s.param_names[i] + "' has another shape");
    s.params[i].copy_(t);
  }
  torch::serialize::InputArchive optim;
  archive.read("optimizer", optim);
  s.optimizer->load(optim);
  s.epoch = state.at("epoch");
  s.next_batch = state.at("next_batch");
  s.rows_done = state.at("rows_done");
  s.tokens_done = state.at("tokens_done");
  s.loss_sum = state.at("loss_sum");
  s.acc_sum = state.at("acc_sum");
  s.seconds = state.at("seconds");
}

}  // namespace attn::train
