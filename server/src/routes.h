#pragma once
/// The routes of `attn serve` (server.h lists them) and what every request goes through before one
/// runs: the Host and Origin allow-list, the route and its method, the API key. Requests are
/// answered asynchronously: an inference request is handed to the batcher, and its answer goes out
/// from the inference thread that finished it, so no HTTP thread ever waits for a model.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api.h"
#include "attn/server/batcher.h"
#include "attn/server/metrics.h"
#include "attn/server/server.h"
#include "auth.h"
#include "http.h"
#include "models.h"
#include "request.h"

namespace attn::server {

/// One request and its answer.
struct Exchange {
  Request request;
  std::vector<std::string> parameters;  ///< the route's {parameter} segments, decoded
  std::size_t inputs = 0;               ///< texts or rows (the access log)
  /// Answers: counted in /metrics and the access log, then written. Once.
  std::function<void(Response)> answer;
};

class Api : public HttpHandler {
 public:
  /// `open_connections` is the connection layer's gauge (for /metrics).
  Api(const ServeOptions& options, ApiKeys keys, ModelStore& store, std::function<std::size_t()> open_connections,
      std::function<void(const std::string&)> log);
  ~Api() override;

  /// Loads every model and starts the batcher: /readyz says ready from then on.
  void load();
  /// Re-reads every model's file (SIGHUP), one after another; each that fails keeps serving.
  void reload_all();
  /// Runs what is queued without waiting for company (requests in flight finish promptly).
  void drain();
  /// Stops the batcher once every request in flight is answered.
  void stop();
  bool authenticated() const { return !keys_.empty(); }

  std::optional<Response> accept(Head& head) override;
  void handle(Request request, Respond respond) override;
  void refused(const std::string& reason, int status) override;

 private:
  std::vector<Route> route_table();
  void infer(const std::shared_ptr<Exchange>& exchange, Mode mode);
  tasks::ExplainOptions explain_options(const InferBody& body, const tasks::TrainedModel& model, Mode mode) const;
  void check_cost(const tasks::TrainedModel& model, const std::vector<tasks::Input>& inputs, const tasks::ExplainOptions& explain) const;
  std::size_t pick(const std::optional<std::string>& name) const;
  /// Re-reads model `model` on the loader thread; `then(info, "")` or `then(null, why)` there.
  void reload(std::size_t model, std::function<void(const nlohmann::ordered_json& info, const std::string& error)> then);
  void require_ready() const;
  bool host_allowed(const std::string& host) const;
  /// Counts a request in /metrics and the access log.
  void record(const Head& head, int status, std::size_t inputs);
  void log_access(const Head& head, int status, double seconds, std::size_t inputs);

  const ServeOptions options_;
  const ApiKeys keys_;
  ModelStore& store_;
  std::function<std::size_t()> open_connections_;
  std::function<void(const std::string&)> log_;
  std::set<std::string> allowed_hosts_;  ///< lower case; empty with allow_any_host_
  bool allow_any_host_ = false;
  std::FILE* access_log_ = nullptr;
  std::mutex access_mutex_;
  std::vector<Route> routes_;
  nlohmann::ordered_json openapi_;
  Metrics metrics_;
  std::unique_ptr<Batcher> batcher_;
  std::atomic<bool> ready_{false};
  std::mutex heavy_mutex_;
  std::map<std::string, std::size_t> heavy_;  ///< importance-method explanations in flight, per client address
};

}  // namespace attn::server
