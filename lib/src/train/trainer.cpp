#include "attn/train/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/torch.h>

#include "attn/train/batching.h"

namespace attn::train {

torch::Tensor batch_ids(const text::PaddedSequences& x, const std::vector<std::int64_t>& rows, bool trim,
                        text::Side padding) {
  std::int64_t width = x.cols;
  if (trim) {
    width = 1;
    for (std::int64_t r : rows) width = std::max(width, x.lengths[static_cast<std::size_t>(r)]);
    width = std::min(width, x.cols);
  }
  torch::Tensor out = torch::empty({static_cast<std::int64_t>(rows.size()), width}, torch::kInt64);
  auto* dst = out.data_ptr<std::int64_t>();
  const std::int64_t offset = padding == text::Side::kPre ? x.cols - width : 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int32_t* src = x.ids.data() + rows[i] * x.cols + offset;
    for (std::int64_t c = 0; c < width; ++c) dst[static_cast<std::int64_t>(i) * width + c] = src[c];
  }
  return out;
}

std::vector<float> predict(torch::jit::Module& model, const text::PaddedSequences& x, const std::vector<std::int64_t>& rows,
                           text::Side padding, std::int64_t batch_size) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<std::int64_t> position(static_cast<std::size_t>(x.rows), -1);
  for (std::size_t i = 0; i < rows.size(); ++i) position[static_cast<std::size_t>(rows[i])] = static_cast<std::int64_t>(i);
  std::vector<float> out;
  std::int64_t labels = 0;
  for (const auto& batch : make_batches(rows, x.lengths, batch_size, /*bucket=*/true, /*shuffle=*/false, 0)) {
    const torch::Tensor probs = model.forward({batch_ids(x, batch, true, padding)}).toTupleRef().elements()[0].toTensor().contiguous();
    if (out.empty()) {
      labels = probs.size(1);
      out.assign(rows.size() * static_cast<std::size_t>(labels), 0.0f);
    }
    const float* p = probs.data_ptr<float>();
    for (std::size_t i = 0; i < batch.size(); ++i)
      std::copy(p + static_cast<std::int64_t>(i) * labels, p + static_cast<std::int64_t>(i + 1) * labels,
                out.begin() + position[static_cast<std::size_t>(batch[i])] * labels);
  }
  model.train(was_training);
  return out;
}

nlohmann::ordered_json to_json(const EpochRecord& r, const std::vector<std::string>& label_names) {
  auto num = [](double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
  nlohmann::ordered_json auc = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < r.validation.auc.size() && k < label_names.size(); ++k) auc[label_names[k]] = num(r.validation.auc[k]);
  nlohmann::ordered_json j;
  j["epoch"] = r.epoch;
  j["loss"] = r.loss;
  j["acc"] = r.accuracy;
  j["val_loss"] = r.validation.loss;
  j["val_acc"] = r.validation.accuracy;
  j["val_auc"] = auc;
  j["val_mean_auc"] = num(r.validation.mean_auc);
  j["train_rows"] = r.train_rows;
  j["val_rows"] = r.validation.rows;
  j["train_tokens"] = r.train_tokens;
  j["seconds"] = r.seconds;
  j["rows_per_second"] = r.rows_per_second;
  return j;
}

struct Trainer::Impl {
  torch::jit::Module model;
  const io::PreparedData& data;
  TrainOptions options;
  std::vector<torch::Tensor> params;
  std::vector<std::string> param_names;
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::vector<std::int64_t> train_rows, val_rows;
  torch::Tensor labels;  // [rows, L] float
  // Position: the next batch of epoch `epoch` (0-based), with the epoch's running sums so far.
  int epoch = 0;
  std::int64_t next_batch = 0, rows_done = 0, tokens_done = 0;
  double loss_sum = 0, acc_sum = 0, seconds = 0;

  Impl(torch::jit::Module m, const io::PreparedData& d, const TrainOptions& o) : model(std::move(m)), data(d), options(o) {
    // TorchScript's executor swaps in an optimised graph after a module's first runs, which can
    // change the last bits of a result: a resumed run (a fresh module) would drift from an
    // uninterrupted one. Unoptimised, every step runs the same graph (process-wide setting).
    torch::jit::setGraphExecutorOptimize(false);
    if (data.label_names.empty()) throw std::invalid_argument("training needs labels, and the prepared data has none");
    if (o.val_split < 0 || o.val_split >= 1) throw std::invalid_argument("val_split must be in [0, 1)");
    if (o.epochs < 1) throw std::invalid_argument("epochs must be >= 1");
    for (const auto& p : model.named_parameters(true)) {
      params.push_back(p.value);
      param_names.push_back(p.name);
    }
    optimizer = std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(o.lr).betas({0.9, 0.999}).eps(1e-7));
    const auto n = data.x.rows;
    const auto n_val = static_cast<std::int64_t>(std::floor(static_cast<double>(n) * o.val_split));  // Keras' split
    for (std::int64_t r = 0; r < n - n_val; ++r) train_rows.push_back(r);
    for (std::int64_t r = n - n_val; r < n; ++r) val_rows.push_back(r);
    if (train_rows.empty()) throw std::invalid_argument("no training rows left after the validation split");
    labels = torch::from_blob(const_cast<float*>(data.labels.data()),
                              {n, static_cast<std::int64_t>(data.label_names.size())}, torch::kFloat32);
  }

  std::vector<std::vector<std::int64_t>> epoch_batches(int e) const {
    return make_batches(train_rows, data.x.lengths, options.batch_size, options.bucket, true,
                        options.seed * 1000003ULL + static_cast<std::uint64_t>(e));
  }

  Evaluation validate() {
    if (val_rows.empty()) return Evaluation{};
    const std::vector<float> probs = predict(model, data.x, val_rows, data.padding, options.batch_size);
    const std::size_t L = data.label_names.size();
    std::vector<float> y;
    y.reserve(val_rows.size() * L);
    for (std::int64_t r : val_rows)
      y.insert(y.end(), data.labels.begin() + r * static_cast<std::int64_t>(L), data.labels.begin() + (r + 1) * static_cast<std::int64_t>(L));
    return evaluate(probs, y, L);
  }
};

Trainer::Trainer(torch::jit::Module model, const io::PreparedData& data, const TrainOptions& options)
    : impl_(std::make_unique<Impl>(std::move(model), data, options)) {}
Trainer::~Trainer() = default;

int Trainer::epochs_done() const { return impl_->epoch; }
torch::jit::Module& Trainer::model() { return impl_->model; }
Evaluation Trainer::validate() { return impl_->validate(); }

bool Trainer::run(const std::atomic<bool>& stop, const std::function<void(const Progress&)>& on_progress,
                  const std::function<void(const EpochRecord&)>& on_epoch) {
  Impl& s = *impl_;
  torch::jit::Method logits = s.model.get_method("logits");
  while (s.epoch < s.options.epochs) {
    const auto batches = s.epoch_batches(s.epoch);
    s.model.train();
    for (; s.next_batch < static_cast<std::int64_t>(batches.size()); ++s.next_batch) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto& rows = batches[static_cast<std::size_t>(s.next_batch)];
      // Dropout masks from (seed, epoch, batch): a resumed run draws exactly the same ones.
      torch::manual_seed(s.options.seed * 1000003ULL + static_cast<std::uint64_t>(s.epoch) * 100003ULL +
                         static_cast<std::uint64_t>(s.next_batch));
      const torch::Tensor ids = batch_ids(s.data.x, rows, s.options.bucket, s.data.padding);
      const torch::Tensor index = torch::tensor(rows, torch::kInt64);
      const torch::Tensor y = s.labels.index_select(0, index);
      const torch::Tensor out = logits({ids}).toTupleRef().elements()[0].toTensor();
      const torch::Tensor loss = torch::binary_cross_entropy_with_logits(out, y);
      s.optimizer->zero_grad();
      loss.backward();
      s.optimizer->step();
      const auto n = static_cast<double>(rows.size());
      {
        torch::NoGradGuard no_grad;
        s.loss_sum += loss.item<double>() * n;
        s.acc_sum += ((out > 0).to(torch::kFloat32) == y).to(torch::kFloat32).mean().item<double>() * n;
      }
      s.rows_done += static_cast<std::int64_t>(rows.size());
      s.tokens_done += ids.numel();
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
