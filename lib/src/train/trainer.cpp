#include "attn/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/script.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "attn/io/atomic_file.h"
#include "attn/io/checksum.h"
#include "attn/io/json_like.h"
#include "attn/io/tensors.h"
#include "attn/nn/adam.h"
#include "attn/parallel/gradient_exchange.h"
#include "attn/parallel/sharing.h"

namespace attn::train {

namespace {

constexpr double kPi = 3.14159265358979323846;

}  // namespace

nlohmann::ordered_json to_json(const EpochRecord& r) {
  nlohmann::ordered_json j;
  j["epoch"] = r.epoch;
  j["loss"] = r.loss;
  j["accuracy"] = r.accuracy;
  for (const auto& [key, value] : r.validation.items()) j["val_" + key] = value;
  j["lr"] = r.lr;
  j["best"] = r.best;
  j["train_rows"] = r.train_rows;
  j["train_tokens"] = r.train_tokens;
  j["seconds"] = r.seconds;
  j["rows_per_second"] = r.rows_per_second;
  if (r.allreduce_bytes >= 0) j["allreduce_bytes"] = r.allreduce_bytes;
  return j;
}

/// checkpoint.pt's "state": where training stands. (Outside the anonymous namespace, as Trainer::Impl
/// holds one; the name is this file's alone.)
struct CheckpointState {
  std::string format = "attn.checkpoint/1";
  std::vector<std::string> parameters;  ///< names, in the order of the param_N tensors
  int epoch = 0;                        ///< epochs done
  std::int64_t next_batch = 0, rows_done = 0, tokens_done = 0;
  double loss_sum = 0, acc_sum = 0, seconds = 0;  ///< the epoch's running sums so far
  // The callbacks: the monitored metric's best value and epoch, epochs since it improved (early
  // stopping) and since the learning rate last changed (reduce-on-plateau), the plateau's rate.
  double best = 0;
  int best_epoch = 0, since_best = 0, since_reduced = 0;
  double plateau_lr = 0;
  double exchanged_bytes = 0;  ///< the epoch's bytes this worker sent into the collectives so far
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CheckpointState, format, parameters, epoch, next_batch, rows_done, tokens_done, loss_sum,
                                                acc_sum, seconds, best, best_epoch, since_best, since_reduced, plateau_lr, exchanged_bytes)

struct Trainer::Impl {
  // TorchScript's executor swaps in an optimised graph after a module's first runs, which can
  // change the last bits of a result: a resumed run (a fresh module) would drift from an
  // uninterrupted one. Unoptimised while training, every step runs the same graph.
  torch::jit::GraphOptimizerEnabledGuard unoptimized{false};
  torch::jit::Module model;
  const tasks::Dataset& data;
  const tasks::Dataset& validation_data;
  TrainOptions options;
  std::vector<torch::Tensor> params, trained;  // every parameter (checkpoints); those Adam updates
  std::unique_ptr<nn::FusedAdam> optimizer;
  std::vector<std::int64_t> train_rows, val_rows;
  torch::Tensor loss_weights;
  std::int64_t steps_per_epoch = 0;
  CheckpointState state;                 // the position: the next batch of epoch state.epoch (0-based), with the running sums
  parallel::Workers* workers = nullptr;  // data-parallel workers (parallel/workers.h), or none
  int rank = 0, world = 1;
  std::unique_ptr<parallel::GradientExchange> exchange;  // their gradients
  std::unique_ptr<parallel::WorkerSharing> sharing;      // their validation
  bool joined = false;                                   // the workers agree on the data, the position and the weights
  std::size_t word_table = SIZE_MAX;                     // the word-vector table among `trained`, if it trains (the exchange's)

  Impl(torch::jit::Module m, const tasks::Dataset& d, const tasks::Dataset* v, const TrainOptions& o, parallel::Workers* w,
       const std::string& word_embedding)
      : model(std::move(m)),
        data(d),
        validation_data(v ? *v : d),
        options(o),
        workers(w),
        rank(w ? w->rank() : 0),
        world(w ? w->size() : 1) {
    train::validate(o);
    for (const auto& p : model.named_parameters(true)) {
      params.push_back(p.value);
      state.parameters.push_back(p.name);
      if (p.value.requires_grad()) {
        if (p.name == word_embedding && p.value.dim() == 2) word_table = trained.size();
        trained.push_back(p.value);
      }
    }
    optimizer = std::make_unique<nn::FusedAdam>(trained, torch::optim::AdamOptions(o.lr).betas({0.9, 0.999}).eps(1e-7));
    const auto n = data.rows();
    if (v) {
      train_rows = tasks::all_rows(n);
      val_rows = tasks::all_rows(v->rows());
    } else {
      const auto n_val = static_cast<std::int64_t>(std::floor(static_cast<double>(n) * o.val_split));  // Keras' split
      for (std::int64_t r = 0; r < n - n_val; ++r) train_rows.push_back(r);
      for (std::int64_t r = n - n_val; r < n; ++r) val_rows.push_back(r);
    }
    if (train_rows.empty()) throw std::runtime_error("no training rows left after the validation split (" + std::to_string(n) + " rows)");
    const bool watches = o.early_stopping_patience > 0 || o.lr_schedule == LrSchedule::kReduceOnPlateau;
    if (watches && o.monitor.rfind("val_", 0) == 0 && val_rows.empty())
      throw std::invalid_argument("--monitor " + o.monitor + " needs validation rows (--val-split > 0 or --val-csv)");
    if (watches && o.monitor.rfind("val_", 0) == 0) {  // a name the validation does not report fails now, not after an epoch
      const std::vector<std::string> names = validation_data.metric_names();
      if (std::find(names.begin(), names.end(), o.monitor.substr(4)) == names.end()) {
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "val_" : ", val_") + n;
        throw std::invalid_argument("--monitor " + o.monitor + ": the validation reports no such number (" + list + ")");
      }
    } else if (watches && o.monitor != "loss" && o.monitor != "accuracy") {
      throw std::invalid_argument("--monitor " + o.monitor + ": loss, accuracy, or val_ and a validation metric (e.g. val_loss)");
    }
    if (o.logit_adjustment != "none" && val_rows.empty())
      throw std::invalid_argument("--logit-adjustment " + o.logit_adjustment +
                                  " chooses its offsets on held-out rows (--val-split > 0 or --val-csv)");
    loss_weights = data.loss_weights({o.pos_weight, o.class_weight, o.span_f1_loss}, train_rows);
    steps_per_epoch = static_cast<std::int64_t>(epoch_batches(0).size());
    state.best = monitor_mode(o.monitor) == MonitorMode::kMinimize ? INFINITY : -INFINITY;
    state.plateau_lr = o.lr;
    if (world > 1) {
      exchange = std::make_unique<parallel::GradientExchange>(
          *workers, trained, word_table, o.sparse_gradients, [this](const std::vector<std::int64_t>& rows) { return data.word_ids(rows); });
      sharing = std::make_unique<parallel::WorkerSharing>(*workers);
    }
  }

  /// Before the first step (after a checkpoint is loaded): every worker must read the same data and
  /// stand at the same position (a restarted worker that found no checkpoint does not), and starts
  /// from rank 0's weights.
  void join() {
    if (world == 1 || joined) return;
    torch::NoGradGuard no_grad;
    const auto facts = [&] {
      return torch::tensor({static_cast<double>(data.rows()), static_cast<double>(val_rows.size()), static_cast<double>(steps_per_epoch),
                            static_cast<double>(params.size()), static_cast<double>(state.epoch), static_cast<double>(state.next_batch)},
                           torch::kFloat64);
    };
    torch::Tensor first = facts();
    workers->broadcast(first);
    const auto said = [](const torch::Tensor& f) {
      return std::to_string(f[0].item<std::int64_t>()) + " rows, " + std::to_string(f[2].item<std::int64_t>()) +
             " batches an epoch, at epoch " + std::to_string(f[4].item<std::int64_t>() + 1) + " batch " +
             std::to_string(f[5].item<std::int64_t>() + 1);
    };
    if (!first.equal(facts()))
      throw std::runtime_error("worker " + std::to_string(rank) + ": its data and position (" + said(facts()) + ") differ from rank 0's (" +
                               said(first) + "): every worker must read the same data, and resume from the same checkpoint " +
                               "(across machines: the run directory on a shared file system)");
    for (torch::Tensor& p : params) workers->broadcast(p);
    // A checkpoint mid-epoch holds the epoch's sums so far: rank 0 carries them (settle_sums).
    if (rank != 0) state.loss_sum = state.acc_sum = 0, state.tokens_done = 0;
    joined = true;
  }

  struct StepTotals {
    double loss_sum = 0, acc_sum = 0;  // over this worker's share of the batch (summed over the workers once an epoch: settle_sums)
    std::int64_t tokens = 0;
    double rows = 0;    // this worker's share of the batch, in rows (part of the batch's loss x its rows)
    bool stop = false;  // some worker was asked to stop (known to every worker after the step's exchange)
    double bytes = 0;   // what this worker put into the step's collectives
  };

  /// One optimizer step on batch `rows`. With several workers each computes its share's loss,
  /// weighted by the share's part of the batch's loss (its rows; a seq2seq share its target
  /// characters), and the gradients are summed: the step is the one a single process takes on the
  /// whole batch.
  StepTotals step(const std::vector<std::int64_t>& rows, tasks::Width width, bool stop_requested) {
    StepTotals t;
    // Gradients start undefined: backward hands each parameter its gradient tensor, with nothing
    // to zero and add to (zero_grad() would clear 10 MB and add into it every step).
    for (torch::Tensor& p : trained) p.mutable_grad() = torch::Tensor();
    const std::vector<std::int64_t> mine = world == 1 ? rows : parallel::share_of(rows, rank, world);
    if (!mine.empty()) {
      const tasks::Batch batch = data.batch(mine, width);
      const tasks::Loss loss = data.loss(model, batch, loss_weights);
      // This share's part of the batch's loss, counted in rows (the epoch's sums are per row).
      const double part = world == 1 ? 1.0 : data.share_of_loss(mine, rows);
      if (world == 1) {
        loss.value.backward();
      } else {
        (loss.value * part).backward();
      }
      const double n = part * static_cast<double>(rows.size());
      t.rows = n;
      t.loss_sum = loss.value.item<double>() * n;
      t.acc_sum = loss.accuracy * n;
      t.tokens = batch.tokens;
    }
    t.stop = stop_requested;
    if (world > 1) {  // the gradients of every share summed: the step of the whole batch
      const parallel::GradientExchange::Step exchanged = exchange->exchange(rows, t.stop);
      t.stop = exchanged.stop;
      t.bytes = exchanged.bytes;
    }
    if (options.clip_norm > 0) torch::nn::utils::clip_grad_norm_(trained, options.clip_norm);
    optimizer->step();
    return t;
  }

  /// The epoch's running sums (loss, accuracy, tokens) over the workers, in one collective: each
  /// worker adds only its shares' during the epoch. Every worker gets the totals; with `carry_on_rank_0`
  /// (a checkpoint mid-epoch) only rank 0 keeps them and the others start again from zero, so that
  /// the next settle counts each share once.
  void settle_sums(bool carry_on_rank_0) {
    if (world == 1) return;
    CheckpointState& p = state;
    torch::Tensor sums = torch::tensor({p.loss_sum, p.acc_sum, static_cast<double>(p.tokens_done)}, torch::kFloat64);
    workers->sum(sums);
    p.loss_sum = sums[0].item<double>();
    p.acc_sum = sums[1].item<double>();
    p.tokens_done = sums[2].item<std::int64_t>();
    if (carry_on_rank_0 && rank != 0) p.loss_sum = p.acc_sum = 0, p.tokens_done = 0;
  }

  std::vector<std::vector<std::int64_t>> epoch_batches(int e) const {
    const tasks::BatchPlan plan{options.batch_size,
                                options.bucket ? tasks::BatchPlan::Grouping::kByLength : tasks::BatchPlan::Grouping::kAsGiven,
                                options.seed * 1000003ULL + static_cast<std::uint64_t>(e)};
    return tasks::make_batches(train_rows, data.lengths(), plan);
  }

  nlohmann::ordered_json validate() {
    return validation_data.evaluate(model, val_rows, {tasks::kScoringBatchSize, tasks::EvaluateOptions::Detail::kMetrics, sharing.get()})
        .metrics;
  }

  /// The learning rate of global step `step` (0-based).
  double lr_at(std::int64_t step) const {
    const TrainOptions& o = options;
    if (o.lr_schedule == LrSchedule::kReduceOnPlateau) return state.plateau_lr;
    if (o.lr_schedule == LrSchedule::kConstant) return o.lr;
    const double total = static_cast<double>(steps_per_epoch) * o.epochs, warm = static_cast<double>(o.warmup_steps);
    const double s = static_cast<double>(step);
    if (s < warm) return o.lr * (s + 1) / warm;
    const double progress = total > warm ? std::min(1.0, (s + 1 - warm) / (total - warm)) : 1.0;  // 1 at the last step
    const double shape = o.lr_schedule == LrSchedule::kCosine ? 0.5 * (1 + std::cos(kPi * progress)) : 1 - progress;
    return o.min_lr + (o.lr - o.min_lr) * shape;
  }

  void set_lr(double lr) {
    for (auto& group : optimizer->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  }

  /// After an epoch: is it the best by `monitor`? Does early stopping end training? Does the plateau
  /// schedule lower the rate?
  void watch(EpochRecord& rec) {
    const TrainOptions& o = options;
    double value = 0;
    if (o.monitor == "loss") {
      value = rec.loss;
    } else if (o.monitor == "accuracy") {
      value = rec.accuracy;
    } else {
      const std::string key = o.monitor.rfind("val_", 0) == 0 ? o.monitor.substr(4) : o.monitor;
      if (!rec.validation.contains(key)) {
        if (o.early_stopping_patience == 0 && o.lr_schedule != LrSchedule::kReduceOnPlateau) return;  // nothing depends on it
        throw std::invalid_argument("--monitor " + o.monitor + ": no such number among the epoch's metrics " + rec.validation.dump());
      }
      // Undefined this epoch (null: e.g. an AUC of validation rows of one class): no improvement, as
      // Keras compares NaN.
      value = rec.validation[key].is_number() ? rec.validation[key].get<double>() : std::nan("");
    }
    const bool improved = monitor_mode(o.monitor) == MonitorMode::kMinimize ? value < state.best : value > state.best;
    if (improved) {
      state.best = value;
      state.best_epoch = rec.epoch;
      state.since_best = 0;
      state.since_reduced = 0;
      rec.best = true;
    } else {
      ++state.since_best;
      ++state.since_reduced;
      if (state.best_epoch == 0) {  // nothing better yet (the metric undefined so far): this epoch stands in, so model.pt holds one
        state.best_epoch = rec.epoch;
        rec.best = true;
      }
    }
    if (o.lr_schedule == LrSchedule::kReduceOnPlateau && state.since_reduced >= o.lr_patience) {
      state.plateau_lr = std::max(o.min_lr, state.plateau_lr * o.lr_factor);
      state.since_reduced = 0;
    }
    rec.stop = o.early_stopping_patience > 0 && state.since_best >= o.early_stopping_patience;
  }
};

Trainer::Trainer(torch::jit::Module model, const tasks::Dataset& data, const tasks::Dataset* validation, const TrainOptions& options,
                 parallel::Workers* workers, const std::string& word_embedding)
    : impl_(std::make_unique<Impl>(std::move(model), data, validation, options, workers, word_embedding)) {}
Trainer::~Trainer() = default;

int Trainer::epochs_done() const { return impl_->state.epoch; }
int Trainer::best_epoch() const { return impl_->state.best_epoch; }
torch::jit::Module& Trainer::model() { return impl_->model; }
nlohmann::ordered_json Trainer::validate() { return impl_->validate(); }
metrics::LogitAdjustment Trainer::logit_offsets(torch::jit::Module& model) {
  return impl_->validation_data.logit_offsets(model, impl_->val_rows);
}

bool Trainer::run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                  const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  CheckpointState& p = s.state;
  const tasks::Width width = s.options.bucket ? tasks::Width::kLongestRow : tasks::Width::kData;
  double lr = s.options.lr;
  s.join();
  // The rows behind this worker's running sums (its shares'; rank 0's include what a checkpoint carried).
  double share_rows = s.rank == 0 ? static_cast<double>(p.rows_done) : 0;
  while (p.epoch < s.options.epochs) {
    const auto batches = s.epoch_batches(p.epoch);
    s.model.train();
    for (; p.next_batch < static_cast<std::int64_t>(batches.size()); ++p.next_batch) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto& rows = batches[static_cast<std::size_t>(p.next_batch)];
      // Dropout masks from (seed, epoch, batch, worker): a resumed run draws exactly the same ones.
      torch::manual_seed(s.options.seed * 1000003ULL + static_cast<std::uint64_t>(p.epoch) * 100003ULL +
                         static_cast<std::uint64_t>(p.next_batch) + static_cast<std::uint64_t>(s.rank) * 0x9E3779B97F4A7C15ULL);
      lr = s.lr_at(p.epoch * s.steps_per_epoch + p.next_batch);
      s.set_lr(lr);
      const Impl::StepTotals t = s.step(rows, width, stop.load());
      p.loss_sum += t.loss_sum;
      share_rows += t.rows;
      p.acc_sum += t.acc_sum;
      p.rows_done += static_cast<std::int64_t>(rows.size());
      p.tokens_done += t.tokens;
      p.exchanged_bytes += t.bytes;
      p.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (on_progress)
        on_progress(Progress{p.epoch + 1, s.options.epochs, p.rows_done, static_cast<std::int64_t>(s.train_rows.size()), p.seconds,
                             p.loss_sum / share_rows, p.acc_sum / share_rows});  // this worker's shares' (all of it in one process)
      if (s.world == 1 ? stop.load() : t.stop) {  // workers: when any of them was asked to, all stop after the same batch
        ++p.next_batch;
        s.settle_sums(true);  // the checkpoint's sums
        return false;
      }
    }
    s.settle_sums(false);
    EpochRecord rec;
    rec.epoch = p.epoch + 1;
    rec.loss = p.loss_sum / static_cast<double>(p.rows_done);
    rec.accuracy = p.acc_sum / static_cast<double>(p.rows_done);
    rec.lr = lr;
    rec.seconds = p.seconds;
    rec.rows_per_second = static_cast<double>(p.rows_done) / p.seconds;
    rec.train_rows = p.rows_done;
    rec.train_tokens = p.tokens_done;
    if (s.world > 1) rec.allreduce_bytes = p.exchanged_bytes / static_cast<double>(batches.size());
    rec.validation = s.validate();
    s.watch(rec);
    ++p.epoch;  // done: a checkpoint written by on_epoch starts the next epoch
    p.next_batch = p.rows_done = p.tokens_done = 0;
    p.loss_sum = p.acc_sum = p.seconds = p.exchanged_bytes = share_rows = 0;
    if (on_epoch) on_epoch(rec);
    if (rec.stop) break;
  }
  return true;
}

void Trainer::save_checkpoint(const std::string& path) const {
  const Impl& s = *impl_;
  torch::serialize::OutputArchive archive;
  nlohmann::json sums = nlohmann::json::object();  // "checksums": a CRC-32 of every entry, checked on load
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const std::string key = "param_" + std::to_string(i);
    archive.write(key, s.params[i]);
    sums[key] = io::tensor_checksum(s.params[i]);
  }
  torch::serialize::OutputArchive optim;
  s.optimizer->save(optim);
  std::string optimizer_bytes;
  optim.save_to([&](const void* data, std::size_t n) {
    optimizer_bytes.append(static_cast<const char*>(data), n);
    return n;
  });
  archive.write("optimizer_bytes",
                torch::from_blob(optimizer_bytes.data(), {static_cast<std::int64_t>(optimizer_bytes.size())}, torch::kUInt8).clone());
  sums["optimizer_bytes"] = io::crc32_hex(optimizer_bytes);
  const std::string state = nlohmann::json(s.state).dump();
  archive.write("state", c10::IValue(state));
  sums["state"] = io::crc32_hex(state);
  archive.write("checksums", c10::IValue(sums.dump()));
  std::ostringstream bytes;  // in memory first, as in models::save_model (LibTorch's file writer aborts on a failed write)
  try {
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": cannot serialise the checkpoint: " + e.what_without_backtrace());
  }
  io::write_file_atomic(path, bytes.str(), io::Durability::kToDisk);  // what --resume continues from, also after a power cut
}

namespace {

/// A checkpoint's checksums (null, with a warning, in one saved before attn 0.2).
nlohmann::json checkpoint_checksums(torch::serialize::InputArchive& archive, const std::string& path) {
  c10::IValue sums_value;
  if (!archive.try_read("checksums", sums_value) || !sums_value.isString()) {
    io::warn(path + ": carries no checksums (saved before attn 0.2): a corrupt checkpoint cannot be told from a good one");
    return nullptr;
  }
  try {
    return nlohmann::json::parse(sums_value.toStringRef());
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path + ": key 'checksums' is not valid: the checkpoint is corrupt");
  }
}

/// A checkpoint's state (its JSON text) over `defaults`: what the callbacks start from, for
/// checkpoints saved before they existed.
CheckpointState checkpoint_state(const std::string& text, const CheckpointState& defaults, const std::string& path) {
  try {
    nlohmann::json loaded = nlohmann::json::parse(text);
    // JSON has no infinity: a "best" not yet set was written as null.
    if (loaded.contains("best") && loaded["best"].is_null()) loaded.erase("best");
    nlohmann::json merged = nlohmann::json(defaults);
    merged.update(loaded);
    return io::get_like<CheckpointState>(merged);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": key 'state': " + e.what());
  }
}

}  // namespace

void Trainer::load_checkpoint(const std::string& path) {
  Impl& s = *impl_;
  torch::serialize::InputArchive archive;
  io::check_archive(path, "a checkpoint");
  try {
    archive.load_from(path);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a checkpoint (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  c10::IValue state_value;
  if (!archive.try_read("state", state_value) || !state_value.isString())
    throw std::runtime_error(path + ": key 'state' missing: not an attn checkpoint");
  const nlohmann::json sums = checkpoint_checksums(archive, path);
  const auto check = [&](const std::string& key, const std::string& sum) {
    if (!sums.is_null() && sums.value(key, std::string()) != sum)
      throw std::runtime_error(path + ": '" + key + "' does not match its checksum: the checkpoint is corrupt");
  };
  check("state", io::crc32_hex(state_value.toStringRef()));
  const CheckpointState state = checkpoint_state(state_value.toStringRef(), s.state, path);
  if (state.parameters != s.state.parameters)
    throw std::runtime_error(path + ": key 'parameters': the checkpoint's parameters do not match this model");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> loaded(s.params.size());  // all checked before any is used
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    archive.read("param_" + std::to_string(i), loaded[i]);
    if (!loaded[i].sizes().equals(s.params[i].sizes()))
      throw std::runtime_error(path + ": parameter '" + state.parameters[i] + "' has another shape");
    io::require_in_storage(loaded[i], path, state.parameters[i]);
    if (!sums.is_null() && sums.value("param_" + std::to_string(i), std::string()) != io::tensor_checksum(loaded[i]))
      throw std::runtime_error(path + ": parameter '" + state.parameters[i] + "' does not match its checksum: the checkpoint is corrupt");
  }
  torch::serialize::InputArchive optim;
  torch::Tensor optimizer_bytes;
  if (archive.try_read("optimizer_bytes", optimizer_bytes)) {
    io::require_in_storage(optimizer_bytes, path, "optimizer_bytes");
    if (optimizer_bytes.scalar_type() != torch::kUInt8 || optimizer_bytes.dim() != 1)
      throw std::runtime_error(path + ": key 'optimizer_bytes' is not a byte tensor: the checkpoint is corrupt");
    const std::string bytes(static_cast<const char*>(optimizer_bytes.contiguous().data_ptr()),
                            static_cast<std::size_t>(optimizer_bytes.numel()));
    check("optimizer_bytes", io::crc32_hex(bytes));
    io::check_archive_bytes(bytes, path + ": optimizer_bytes");
    std::istringstream in(bytes);
    optim.load_from(in);
  } else {
    archive.read("optimizer", optim);  // a checkpoint from before attn 0.2
  }
  s.optimizer->load(optim);
  for (std::size_t i = 0; i < s.params.size(); ++i) s.params[i].copy_(loaded[i]);
  s.state = state;
}

}  // namespace attn::train
