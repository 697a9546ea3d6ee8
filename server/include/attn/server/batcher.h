#pragma once
/// Dynamic batching for `attn serve`: requests from every connection wait in one queue and run
/// together on the inference threads, the oldest request waiting at most max_delay for company (by
/// default not at all: a batch is what queued while the inference threads were busy). Each
/// inference thread runs its own batch (with one LibTorch thread each, small batches use the cores
/// far better than one batch on all of them).
///
/// Requests are weighed by what they cost (TrainedModel::explain_cost: an input explained by
/// integrated gradients costs ~steps x labels forward and backward passes; one predicted, one pass).
/// A batch holds at most max_batch units of cost; a request that costs more runs a slice at a time,
/// going to the back of the queue after each, so one heavy request cannot hold the inference threads
/// while light ones wait behind it. Light requests (cost 1 an input: predictions, attention) go
/// first: a free inference thread takes the oldest light request's kind before the oldest request's,
/// so a prediction waits at most for the batches already running, however much heavy work is
/// queued. A request's results do not depend on what it was batched with: the tasks' predict and
/// explain are batch-independent (length-bucketed, padding masked). Results are delivered through a
/// callback, on an inference thread: nothing waits for them.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tasks/task.h"

namespace attn::server {

/// What a request asks for: the outputs only, or explanations (with a transformer's self-attention,
/// which is large, on request). Requests of one model, mode and explain options run together.
enum class Mode { kPredict, kExplain, kExplainWithSelfAttention };

struct BatcherOptions {
  std::int64_t max_batch = 64;             ///< cost per batch (inputs, for predictions and attention)
  std::chrono::milliseconds max_delay{0};  ///< how long the oldest request waits for company
  std::size_t max_queue = 1024;            ///< inputs that may wait; more is QueueFull
  int workers = 1;                         ///< inference threads
  /// A request still wholly queued this long after it was submitted is dropped (TimedOut), its work
  /// never done: nobody waits for it any more. 0: no deadline.
  std::chrono::milliseconds request_timeout{0};
  /// The clock of request_timeout (tests pass a fake one).
  std::function<std::chrono::steady_clock::time_point()> clock = [] { return std::chrono::steady_clock::now(); };
};

/// The queue holds max_queue inputs already (HTTP 503).
class QueueFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A request waited in the queue past its deadline (HTTP 503).
class TimedOut : public std::runtime_error {
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
/// A request's end: its results, or the exception its inputs raised (then `results` is empty).
using Done = std::function<void(Results results, std::exception_ptr error)>;

class Batcher {
 public:
  /// models[m][w] is model m as inference thread w runs it: one copy per thread (two threads must
  /// not run one TorchScript module's methods at once), options.workers of them. `on_batch(inputs)`
  /// is told the size of every batch, before it runs.
  Batcher(std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> models, BatcherOptions options,
          std::function<void(std::size_t)> on_batch = nullptr);
  /// The same with models the caller owns (they must outlive the batcher).
  Batcher(const std::vector<std::vector<tasks::TrainedModel*>>& models, BatcherOptions options,
          std::function<void(std::size_t)> on_batch = nullptr);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  /// Queues one request's inputs for models[model]; `done` is called once, on an inference thread
  /// (or on this one for an empty request), with one JSON text per input (explain: what `attn
  /// explain --json` prints, with options' methods; predict: the outputs only), or with the
  /// exception the request's inputs raised, or TimedOut. Throws QueueFull, or Stopped once stopped
  /// (then `done` is never called).
  void submit(std::size_t model, Mode mode, std::vector<tasks::Input> inputs, tasks::ExplainOptions options, Done done);
  /// Inputs waiting.
  std::size_t queued() const;
  /// Model `model` is `copies` from now on (a reload): batches formed from now on run on them, a
  /// batch already running finishes on the old ones (kept alive until then).
  void replace(std::size_t model, std::vector<std::shared_ptr<tasks::TrainedModel>> copies);
  /// From now on nothing waits for company: what is queued runs at once (a server shutting down
  /// finishes the requests in flight without waiting out --max-delay-ms). Requests are still taken.
  void drain();
  /// Takes no more requests, runs every queued one, joins the inference threads.
  void stop();

 private:
  /// A request: its inputs are handed out in slices; the last slice to finish calls its callback.
  struct Request {
    std::size_t model;
    Mode mode;
    tasks::ExplainOptions options;
    std::vector<tasks::Input> inputs;
    std::int64_t cost = 1;  ///< per input
    Done done;
    std::chrono::steady_clock::time_point queued_at;
    std::chrono::steady_clock::time_point expires_at;  ///< (options.clock's time) dropped if wholly queued then
    std::size_t handed_out = 0;                        ///< inputs given to slices so far
    std::size_t finished = 0;                          ///< inputs whose slice has run
    Results results;
    std::exception_ptr error;
  };
  /// Inputs [first, first + count) of a request, run in some batch.
  struct Slice {
    std::shared_ptr<Request> request;
    std::size_t first = 0, count = 0;
  };
  void loop(int worker);
  // What loop() does with the lock held: the request that fixes the next batch's model, mode and
  // methods (the oldest light one, else the oldest; those of its kind join it), the cost of its kind
  // waiting, and up to `share` units of that cost handed out, oldest first.
  std::shared_ptr<Request> leader() const;
  static bool joins(const Request& r, const Request& leader);
  std::int64_t waiting(const Request& leader) const;
  std::vector<Slice> take(const Request& leader, std::int64_t share);
  /// Takes the requests wholly queued past their deadline out of the queue (mutex_ held); their
  /// callbacks are the caller's to run once it has let go of the mutex.
  std::vector<std::shared_ptr<Request>> take_expired();
  void run(tasks::TrainedModel& model, std::vector<Slice>& batch);
  Results compute(tasks::TrainedModel& model, const Request& key, const std::vector<tasks::Input>& inputs);
  void finish(Slice& slice, Results results, std::exception_ptr error);

  std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> models_;  // [model][worker] (mutex_)
  BatcherOptions options_;
  std::function<void(std::size_t)> on_batch_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Request>> queue_;  ///< requests with inputs not yet handed out
  std::size_t queued_inputs_ = 0;
  bool stopping_ = false;
  bool draining_ = false;
  int idle_ = 0;  ///< inference threads waiting for work
  std::vector<std::thread> workers_;
};

}  // namespace attn::server
