#include "attn/server/batcher.h"

#include <algorithm>

namespace attn::server {
namespace {

/// Whether two requests can share a batch: the same model, mode and importance methods.
bool same_kind(std::size_t model_a, Mode mode_a, const tasks::ExplainOptions& a, std::size_t model_b, Mode mode_b,
               const tasks::ExplainOptions& b) {
  return model_a == model_b && mode_a == mode_b && a.methods == b.methods && (a.methods.empty() || a.steps == b.steps);
}

}  // namespace

namespace {
std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> borrowed(const std::vector<std::vector<tasks::TrainedModel*>>& models) {
  std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> out;
  for (const auto& copies : models) {
    out.emplace_back();
    for (tasks::TrainedModel* m : copies)
      out.back().push_back(std::shared_ptr<tasks::TrainedModel>(std::shared_ptr<void>(), m));  // not owned
  }
  return out;
}
}  // namespace

Batcher::Batcher(const std::vector<std::vector<tasks::TrainedModel*>>& models, BatcherOptions options,
                 std::function<void(std::size_t)> on_batch)
    : Batcher(borrowed(models), std::move(options), std::move(on_batch)) {}

Batcher::Batcher(std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> models, BatcherOptions options,
                 std::function<void(std::size_t)> on_batch)
    : models_(std::move(models)), options_(options), on_batch_(std::move(on_batch)) {
  if (options_.max_batch < 1) throw std::invalid_argument("--max-batch must be >= 1");
  if (options_.workers < 1) throw std::invalid_argument("--threads must be >= 1");
  for (const auto& copies : models_)
    if (static_cast<int>(copies.size()) != options_.workers)
      throw std::invalid_argument("Batcher: one copy of each model per inference thread");
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this, i] { loop(i); });
}

Batcher::~Batcher() { stop(); }

void Batcher::submit(std::size_t model, Mode mode, std::vector<tasks::Input> inputs, tasks::ExplainOptions options, Done done) {
  auto r = std::make_shared<Request>();
  r->model = model;
  r->mode = mode;
  r->options = std::move(options);
  r->inputs = std::move(inputs);
  r->done = std::move(done);
  std::shared_ptr<tasks::TrainedModel> first;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = models_.at(model).front();
  }
  r->cost = mode == Mode::kPredict ? 1 : std::max<std::int64_t>(1, first->explain_cost(r->options));
  r->results.resize(r->inputs.size());
  r->queued_at = std::chrono::steady_clock::now();
  if (options_.request_timeout.count() > 0) r->expires_at = options_.clock() + options_.request_timeout;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw Stopped("the server is shutting down");
    if (queued_inputs_ + r->inputs.size() > options_.max_queue)
      throw QueueFull("the queue holds " + std::to_string(queued_inputs_) + " inputs (--max-queue " + std::to_string(options_.max_queue) +
                      ")");
    if (!r->inputs.empty()) {
      queued_inputs_ += r->inputs.size();
      queue_.push_back(r);
    }
  }
  if (r->inputs.empty()) return r->done({}, nullptr);
  wake_.notify_all();
}

std::size_t Batcher::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_inputs_;
}

void Batcher::replace(std::size_t model, std::vector<std::shared_ptr<tasks::TrainedModel>> copies) {
  if (static_cast<int>(copies.size()) != options_.workers)
    throw std::invalid_argument("Batcher: one copy of each model per inference thread");
  std::lock_guard<std::mutex> lock(mutex_);
  models_.at(model) = std::move(copies);
}

void Batcher::drain() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    draining_ = true;
  }
  wake_.notify_all();
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

std::vector<std::shared_ptr<Batcher::Request>> Batcher::take_expired() {
  std::vector<std::shared_ptr<Request>> expired;
  if (options_.request_timeout.count() <= 0) return expired;
  const auto now = options_.clock();
  for (auto it = queue_.begin(); it != queue_.end();) {
    Request& r = **it;
    if (r.handed_out > 0 || now < r.expires_at) {  // (a request partly run finishes)
      ++it;
      continue;
    }
    queued_inputs_ -= r.inputs.size();
    expired.push_back(*it);
    it = queue_.erase(it);
  }
  return expired;
}

std::shared_ptr<Batcher::Request> Batcher::leader() const {
  for (const auto& r : queue_)
    if (r->cost == 1) return r;
  return queue_.front();
}

bool Batcher::joins(const Request& r, const Request& leader) {
  return same_kind(r.model, r.mode, r.options, leader.model, leader.mode, leader.options);
}

std::int64_t Batcher::waiting(const Request& leader) const {
  std::int64_t cost = 0;
  for (const auto& r : queue_)
    if (joins(*r, leader)) cost += static_cast<std::int64_t>(r->inputs.size() - r->handed_out) * r->cost;
  return cost;
}

std::vector<Batcher::Slice> Batcher::take(const Request& leader, std::int64_t share) {
  std::vector<Slice> batch;
  std::int64_t cost = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    Request& r = **it;
    if (!joins(r, leader)) {
      ++it;
      continue;
    }
    const std::size_t left = r.inputs.size() - r.handed_out;
    std::int64_t fit = (share - cost) / r.cost;
    if (batch.empty()) fit = std::max<std::int64_t>(fit, 1);  // a batch runs at least one input
    if (fit <= 0) break;
    const std::size_t count = std::min(left, static_cast<std::size_t>(fit));
    batch.push_back({*it, r.handed_out, count});
    r.handed_out += count;
    queued_inputs_ -= count;
    cost += static_cast<std::int64_t>(count) * r.cost;
    if (r.handed_out == r.inputs.size()) {
      it = queue_.erase(it);
      continue;
    }
    // The rest of a request too costly for one batch waits behind everything queued now.
    std::shared_ptr<Request> rest = *it;
    queue_.erase(it);
    queue_.push_back(std::move(rest));
    break;
  }
  return batch;
}

void Batcher::loop(int worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++idle_;
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (const auto expired = take_expired(); !expired.empty()) {
      lock.unlock();
      for (const auto& r : expired)
        r->done({}, std::make_exception_ptr(TimedOut("the request waited in the queue longer than --request-timeout-ms (" +
                                                     std::to_string(options_.request_timeout.count()) +
                                                     " ms); the server is overloaded, retry later")));
      lock.lock();
      continue;
    }
    if (queue_.empty()) {
      if (stopping_) return;  // everything queued has run
      continue;
    }
    const std::shared_ptr<Request> first = leader();
    const auto deadline = first->queued_at + options_.max_delay;
    while (!stopping_ && !draining_ && waiting(*first) < options_.max_batch && std::chrono::steady_clock::now() < deadline)
      wake_.wait_until(lock, deadline);
    // Idle inference threads share what waits: clients that all sent at once are not served by one
    // thread while the others look on.
    const std::int64_t idle = std::max(1, idle_);
    const std::int64_t share = std::min(options_.max_batch, std::max<std::int64_t>(1, (waiting(*first) + idle - 1) / idle));
    std::vector<Slice> batch = take(*first, share);
    if (batch.empty()) continue;  // another inference thread took them while this one waited
    --idle_;
    std::shared_ptr<tasks::TrainedModel> model = models_.at(batch.front().request->model).at(static_cast<std::size_t>(worker));
    lock.unlock();
    run(*model, batch);
    model.reset();  // (after a reload, the last batch on the old copy frees it)
    lock.lock();
    ++idle_;
  }
}

Results Batcher::compute(tasks::TrainedModel& m, const Request& key, const std::vector<tasks::Input>& inputs) {
  Results out;
  if (key.mode == Mode::kPredict) {
    for (const auto& r : m.predict(inputs, options_.max_batch)) out.push_back(r.dump());
    return out;
  }
  const auto explained = m.explain(inputs, options_.max_batch, key.options);
  const auto self_attention = key.mode == Mode::kExplainWithSelfAttention ? report::SelfAttention::kInclude : report::SelfAttention::kOmit;
  for (std::size_t i = 0; i < explained->size(); ++i) out.push_back(explained->json_line(i, self_attention));
  return out;
}

void Batcher::finish(Slice& slice, Results results, std::exception_ptr error) {
  Request& r = *slice.request;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !r.error) r.error = error;
    for (std::size_t i = 0; i < results.size() && i < slice.count; ++i) r.results[slice.first + i] = std::move(results[i]);
    r.finished += slice.count;
    if (r.finished < r.inputs.size()) return;
  }
  // The last slice: nothing else touches the request now.
  if (r.error)
    r.done({}, r.error);
  else
    r.done(std::move(r.results), nullptr);
}

void Batcher::run(tasks::TrainedModel& model, std::vector<Slice>& batch) {
  const auto inputs_of = [](const Slice& s) {
    return std::vector<tasks::Input>(s.request->inputs.begin() + static_cast<std::ptrdiff_t>(s.first),
                                     s.request->inputs.begin() + static_cast<std::ptrdiff_t>(s.first + s.count));
  };
  std::vector<tasks::Input> inputs;
  for (const Slice& s : batch) {
    const std::vector<tasks::Input> mine = inputs_of(s);
    inputs.insert(inputs.end(), mine.begin(), mine.end());
  }
  if (on_batch_) on_batch_(inputs.size());
  try {
    Results all = compute(model, *batch.front().request, inputs);
    std::size_t next = 0;
    for (Slice& s : batch) {
      finish(s,
             Results(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(next)),
                     std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(next + s.count))),
             nullptr);
      next += s.count;
    }
  } catch (...) {
    // One request's inputs failed the batch: run each slice alone, so the error reaches only its own.
    const std::exception_ptr error = std::current_exception();
    for (Slice& s : batch) {
      if (batch.size() == 1) {
        finish(s, {}, error);
        continue;
      }
      try {
        finish(s, compute(model, *s.request, inputs_of(s)), nullptr);
      } catch (...) {
        finish(s, {}, std::current_exception());
      }
    }
  }
}

}  // namespace attn::server
