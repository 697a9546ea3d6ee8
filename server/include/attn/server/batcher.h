#pragma once
/// Dynamic batching for `attn serve`: requests from every connection wait in one queue and run
/// together on the inference threads, in batches of at most max_batch inputs, the oldest request
/// waiting at most max_delay for company (by default not at all: a batch is what queued while the
/// inference threads were busy). Each inference thread runs its own batch (with one
/// LibTorch thread each, small batches use the cores far better than one batch on all of them). A request's results do not depend on what it was batched
/// with: the tasks' predict and explain are batch-independent (length-bucketed, padding masked).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tasks/task.h"

namespace attn::server {

/// What a request asks for: the outputs only, or explanations (with a transformer's self-attention,
/// which is large, on request). Requests of one model and mode run together.
enum class Mode { kPredict, kExplain, kExplainWithSelfAttention };

struct BatcherOptions {
  std::int64_t max_batch = 64;             ///< inputs per batch (a larger request runs in batches of this)
  std::chrono::milliseconds max_delay{0};  ///< how long the oldest request waits for company
  std::size_t max_queue = 1024;            ///< inputs that may wait; more is QueueFull
  int workers = 1;                         ///< inference threads
};

/// The queue holds max_queue inputs already (HTTP 503).
class QueueFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The batcher was stopped: it takes no more requests (HTTP 503).
class Stopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One JSON object per input, as text (explain: what `attn explain --json` prints; predict: the outputs).
using Results = std::vector<std::string>;

class Batcher {
 public:
  /// models[m][w] is model m as inference thread w runs it: one copy per thread (two threads must
  /// not run one TorchScript module's methods at once), options.workers of them. They must outlive
  /// the batcher; `on_batch(inputs)` is told the size of every batch run.
  Batcher(std::vector<std::vector<tasks::TrainedModel*>> models, BatcherOptions options,
          std::function<void(std::size_t)> on_batch = nullptr);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  /// Queues one request's inputs for models[model]: the future holds one JSON text per input
  /// (explain: what `attn explain --json` prints; predict: the outputs only), or the exception
  /// the request's inputs raised. Throws QueueFull, or Stopped once stopped.
  std::future<Results> submit(std::size_t model, Mode mode, std::vector<tasks::Input> inputs);
  /// Inputs waiting.
  std::size_t queued() const;
  /// Takes no more requests, runs every queued one, joins the inference threads.
  void stop();

 private:
  struct Request {
    std::size_t model;
    Mode mode;
    std::vector<tasks::Input> inputs;
    std::promise<Results> promise;
    std::chrono::steady_clock::time_point queued_at;
  };
  void loop(int worker);
  void run(int worker, std::vector<Request>& batch);
  Results compute(int worker, std::size_t model, Mode mode, const std::vector<tasks::Input>& inputs);

  std::vector<std::vector<tasks::TrainedModel*>> models_;  // [model][worker]
  BatcherOptions options_;
  std::function<void(std::size_t)> on_batch_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Request> queue_;
  std::size_t queued_inputs_ = 0;
  bool stopping_ = false;
  int idle_ = 0;  ///< inference threads waiting for work
  std::vector<std::thread> workers_;
};

}  // namespace attn::server
