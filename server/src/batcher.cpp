#include "attn/server/batcher.h"

namespace attn::server {

Batcher::Batcher(std::vector<std::vector<tasks::TrainedModel*>> models, BatcherOptions options, std::function<void(std::size_t)> on_batch)
    : models_(std::move(models)), options_(options), on_batch_(std::move(on_batch)) {
  if (options_.max_batch < 1) throw std::invalid_argument("--max-batch must be >= 1");
  if (options_.workers < 1) throw std::invalid_argument("--threads must be >= 1");
  for (const auto& copies : models_)
    if (static_cast<int>(copies.size()) != options_.workers) throw std::invalid_argument("Batcher: one copy of each model per inference thread");
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this, i] { loop(i); });
}

Batcher::~Batcher() { stop(); }

std::future<Results> Batcher::submit(std::size_t model, Mode mode, std::vector<tasks::Input> inputs) {
  Request r{model, mode, std::move(inputs), {}, std::chrono::steady_clock::now()};
  std::future<Results> result = r.promise.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw Stopped("the server is shutting down");
    if (queued_inputs_ + r.inputs.size() > options_.max_queue)
      throw QueueFull("the queue holds " + std::to_string(queued_inputs_) + " inputs (--max-queue " + std::to_string(options_.max_queue) + ")");
    queued_inputs_ += r.inputs.size();
    queue_.push_back(std::move(r));
  }
  wake_.notify_all();
  return result;
}

std::size_t Batcher::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_inputs_;
}

void Batcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& w : workers_)
    if (w.joinable()) w.join();
}

void Batcher::loop(int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++idle_;
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    // The oldest request fixes the model and mode; requests for the same join it, up to max_batch
    // inputs, until its deadline.
    const std::size_t model = queue_.front().model;
    const Mode mode = queue_.front().mode;
    const auto same = [&](const Request& r) { return r.model == model && r.mode == mode; };
    const auto deadline = queue_.front().queued_at + options_.max_delay;
    const auto waiting = [&] {
      std::size_t n = 0;
      for (const Request& r : queue_) n += same(r) ? r.inputs.size() : 0;
      return static_cast<std::int64_t>(n);
    };
    while (!stopping_ && waiting() < options_.max_batch && std::chrono::steady_clock::now() < deadline) wake_.wait_until(lock, deadline);
    // Idle inference threads share what waits: clients that all sent at once are not served by one
    // thread while the others look on.
    const std::int64_t idle = std::max(1, idle_);
    const std::int64_t share = std::min(options_.max_batch, std::max<std::int64_t>(1, (waiting() + idle - 1) / idle));
    std::vector<Request> batch;
    std::int64_t inputs = 0;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (same(*it) && (batch.empty() || inputs + static_cast<std::int64_t>(it->inputs.size()) <= share)) {
        inputs += static_cast<std::int64_t>(it->inputs.size());
        queued_inputs_ -= it->inputs.size();
        batch.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (batch.empty()) continue;  // another inference thread took them while this one waited
    --idle_;
    lock.unlock();
    run(worker, batch);
    lock.lock();
    ++idle_;
  }
}

Results Batcher::compute(int worker, std::size_t model, Mode mode, const std::vector<tasks::Input>& inputs) {
  tasks::TrainedModel& m = *models_.at(model).at(static_cast<std::size_t>(worker));
  Results out;
  if (mode == Mode::kPredict) {
    for (const auto& r : m.predict(inputs, options_.max_batch)) out.push_back(r.dump());
    return out;
  }
  const auto explained = m.explain(inputs, options_.max_batch);
  const auto self_attention = mode == Mode::kExplainWithSelfAttention ? report::SelfAttention::kInclude : report::SelfAttention::kOmit;
  for (std::size_t i = 0; i < explained->size(); ++i) out.push_back(explained->json_line(i, self_attention));
  return out;
}

void Batcher::run(int worker, std::vector<Request>& batch) {
  std::vector<tasks::Input> inputs;
  for (const Request& r : batch) inputs.insert(inputs.end(), r.inputs.begin(), r.inputs.end());
  if (on_batch_) on_batch_(inputs.size());
  try {
    const Results all = compute(worker, batch.front().model, batch.front().mode, inputs);
    std::size_t next = 0;
    for (Request& r : batch) {
      r.promise.set_value(Results(all.begin() + static_cast<std::ptrdiff_t>(next), all.begin() + static_cast<std::ptrdiff_t>(next + r.inputs.size())));
      next += r.inputs.size();
    }
  } catch (...) {
    // One request's inputs failed the batch: run each alone, so the error reaches only its own.
    const std::exception_ptr error = std::current_exception();
    for (Request& r : batch) {
      if (batch.size() == 1) {
        r.promise.set_exception(error);
        continue;
      }
      try {
        r.promise.set_value(compute(worker, r.model, r.mode, r.inputs));
      } catch (...) {
        r.promise.set_exception(std::current_exception());
      }
    }
  }
}

}  // namespace attn::server
