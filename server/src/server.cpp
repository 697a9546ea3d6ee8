#include "attn/server/server.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "attn/server/batcher.h"
#include "attn/server/metrics.h"
#include "attn/tasks/commands.h"
#include "attn/tasks/task.h"

namespace attn::server {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

/// The explain page (page/explain.html, compiled in by CMake).
const char* kPage =
#include "explain_page.inc"
    ;

/// A failed request: its status and message.
struct HttpError : std::runtime_error {
  HttpError(int s, const std::string& message) : std::runtime_error(message), status(s) {}
  int status;
};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  // A message may quote a client's bytes (a JSON parser's "last read"): never fail on invalid UTF-8.
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, {{"error", {{"status", status}, {"message", message}}}});
}

struct Served {
  std::string name, path;
  std::unique_ptr<tasks::TrainedModel> model;                ///< the first inference thread's
  std::vector<std::unique_ptr<tasks::TrainedModel>> copies;  ///< the other threads' (loaded apart: a
                                                             ///< module's methods run on one thread at a time)
  json info;                                                 ///< what /v1/models says of it
};

class Service {
 public:
  explicit Service(const ServeOptions& o) : options_(o) {
    for (const std::string& argument : o.models) {
      auto [name, path] = parse_model_argument(argument);
      for (const Served& s : served_)
        if (s.name == name) throw std::invalid_argument("--model: two models are called '" + name + "'");
      served_.push_back({name, path, nullptr, {}, {}});
    }
    if (served_.empty()) throw std::invalid_argument("--model NAME=PATH is required (one or more)");
  }

  /// Loads each model once per inference thread, refusing a bad one with its name, and runs each
  /// copy on its examples (the first runs of a TorchScript method pay for its setup).
  void load(const std::function<void(const std::string&)>& log) {
    std::vector<std::vector<tasks::TrainedModel*>> models;
    for (Served& s : served_) {
      try {
        s.model = tasks::open_model(s.path);
        for (int w = 1; w < options_.workers; ++w) s.copies.push_back(tasks::open_model(s.path));
        const std::vector<tasks::Input> warm = s.model->read_inputs(s.model->examples(), data::Inputs{}, nullptr);
        models.push_back({s.model.get()});
        for (auto& copy : s.copies) models.back().push_back(copy.get());
        for (tasks::TrainedModel* m : models.back()) {
          m->predict(warm, options_.max_batch);
          m->explain(warm, options_.max_batch);
        }
      } catch (const std::exception& e) {
        throw std::runtime_error("model '" + s.name + "' (" + s.path + "): " + e.what());
      }
      const models::SavedModel& saved = s.model->saved();
      s.info = {{"name", s.name}, {"model", saved.entry->name}, {"path", saved.path}};
      const json described = s.model->describe();
      for (const auto& [key, value] : described.items()) s.info[key] = value;
      s.info["config"] = saved.config.at("model_config");
      s.info["methods"] = json::array();
      for (models::Method m : s.model->methods()) s.info["methods"].push_back(models::method_name(m));
      s.info["max_steps"] = options_.max_steps;
      s.info["examples"] = s.model->examples();
      log("loaded " + s.name + ": " + saved.entry->name + " from " + saved.path);
    }
    batcher_ = std::make_unique<Batcher>(
        models, BatcherOptions{options_.max_batch, std::chrono::milliseconds(options_.max_delay_ms), options_.max_queue, options_.workers},
        [this](std::size_t n) { metrics_.batch(n); });
    ready_ = true;
  }

  /// Runs what is queued without waiting for company (requests in flight finish promptly).
  void drain() {
    if (batcher_) batcher_->drain();
  }
  void stop() {
    if (batcher_) batcher_->stop();
  }

  void routes(httplib::Server& http) {
    http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, {{"status", "alive"}}); });
    http.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
      if (ready_)
        send_json(res, 200, {{"status", "ready"}, {"models", served_.size()}});
      else
        send_error(res, 503, "models are loading");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      require_ready();
      json all = json::array();
      for (const Served& s : served_) all.push_back(s.info);
      send_json(res, 200, {{"models", all}});
    });
    http.Post("/v1/explain", [this](const httplib::Request& req, httplib::Response& res) { infer(req, res, Mode::kExplain); });
    http.Post("/v1/predict", [this](const httplib::Request& req, httplib::Response& res) { infer(req, res, Mode::kPredict); });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_.render(batcher_ ? batcher_->queued() : 0, ready_ ? served_.size() : 0), "text/plain; version=0.0.4");
    });
    http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kPage, "text/html; charset=utf-8"); });
    // The other methods on known paths: 405 with Allow.
    for (const char* path : {"/", "/healthz", "/readyz", "/v1/models", "/metrics"}) not_allowed(http, path, "GET");
    for (const char* path : {"/v1/explain", "/v1/predict"}) not_allowed(http, path, "POST");
    // Errors httplib raises itself (no route: 404; body over the limit: 413) get the JSON body too.
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty())
        send_error(res, res.status,
                   res.status == 404   ? "no such path"
                   : res.status == 413 ? "the body is too large (--max-body-bytes)"
                                       : "bad request");
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
      try {
        std::rethrow_exception(error);
      } catch (const HttpError& e) {
        send_error(res, e.status, e.what());
      } catch (const std::exception& e) {
        send_error(res, 500, e.what());
      }
    });
    // Every request is counted by route and status, with its latency.
    http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
      request_started() = Clock::now();
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      static const char* const known[] = {"/", "/healthz", "/readyz", "/v1/models", "/v1/explain", "/v1/predict", "/metrics"};
      std::string route = "other";
      for (const char* k : known)
        if (req.path == k) route = k;
      metrics_.request(route, res.status, std::chrono::duration<double>(Clock::now() - request_started()).count());
    });
  }

 private:
  static Clock::time_point& request_started() {
    thread_local Clock::time_point t = Clock::now();
    return t;
  }

  static void not_allowed(httplib::Server& http, const std::string& path, const std::string& allow) {
    const auto handler = [allow](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      send_error(res, 405, req.method + " is not allowed on " + req.path + " (" + allow + ")");
    };
    if (allow != "GET") http.Get(path, handler);
    if (allow != "POST") http.Post(path, handler);
    http.Put(path, handler);
    http.Delete(path, handler);
    http.Patch(path, handler);
  }

  void require_ready() const {
    if (!ready_) throw HttpError(503, "models are loading");
  }

  /// POST /v1/explain and /v1/predict.
  void infer(const httplib::Request& req, httplib::Response& res, Mode mode) {
    require_ready();
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::parse_error& e) {
      throw HttpError(400, std::string("malformed JSON (or invalid UTF-8): ") + e.what());
    }
    if (!body.is_object()) throw HttpError(400, "the body must be a JSON object");
    Served& served = pick(body);
    const std::string wanted = served.info.at("input");  // "texts" or "rows"
    const std::string other = wanted == "texts" ? "rows" : "texts";
    if (body.contains(other)) throw HttpError(400, "model '" + served.name + "' reads \"" + wanted + "\", not \"" + other + "\"");
    if (!body.contains(wanted)) throw HttpError(400, "field \"" + wanted + "\" is required");
    const json& items = body[wanted];
    if (!items.is_array()) throw HttpError(400, "field \"" + wanted + "\" must be an array");
    if (items.empty()) throw HttpError(400, "field \"" + wanted + "\" is empty");
    if (items.size() > options_.max_texts)
      throw HttpError(
          413, std::to_string(items.size()) + " inputs; at most " + std::to_string(options_.max_texts) + " per request (--max-texts)");
    bool self_attention = false;
    if (body.contains("self_attention")) {
      if (!body["self_attention"].is_boolean()) throw HttpError(400, "field \"self_attention\" must be true or false");
      self_attention = body["self_attention"];
    }
    std::vector<tasks::Input> inputs;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const json& item = items[i];
      tasks::Input in;
      if (wanted == "texts") {
        if (!item.is_string()) throw HttpError(400, "texts[" + std::to_string(i) + "] must be a string");
        in.text = item.get<std::string>();
      } else {
        if (!item.is_array()) throw HttpError(400, "rows[" + std::to_string(i) + "] must be an array of numbers");
        for (const json& v : item) {
          if (!v.is_number()) throw HttpError(400, "rows[" + std::to_string(i) + "] must be an array of numbers");
          in.values.push_back(v.get<float>());
        }
      }
      inputs.push_back(std::move(in));
    }
    try {
      served.model->check(inputs);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
    const tasks::ExplainOptions explain = explain_options(body, served, mode);
    if (mode == Mode::kExplain && self_attention) mode = Mode::kExplainWithSelfAttention;
    std::future<Results> future;
    try {
      future = batcher_->submit(static_cast<std::size_t>(&served - served_.data()), mode, std::move(inputs), explain);
    } catch (const QueueFull& e) {
      res.set_header("Retry-After", "1");
      throw HttpError(503, e.what());
    } catch (const Stopped& e) {
      throw HttpError(503, e.what());
    }
    Results results;
    try {
      results = future.get();
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
    std::string body_out = "{\"model\":" + json(served.name).dump(-1, ' ', false, json::error_handler_t::replace) + ",\"results\":[";
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (i) body_out += ',';
      body_out += results[i];
    }
    res.status = 200;
    res.set_content(body_out + "]}", "application/json");
  }

  /// "methods" (an array of names, or one comma-separated string) and "steps" of /v1/explain.
  tasks::ExplainOptions explain_options(const json& body, const Served& served, Mode mode) const {
    if (mode == Mode::kPredict) {
      for (const char* field : {"methods", "steps"})
        if (body.contains(field)) throw HttpError(400, std::string("field \"") + field + "\" is for /v1/explain");
      return {};
    }
    std::string methods;
    if (body.contains("methods")) {
      const json& m = body["methods"];
      if (m.is_string()) {
        methods = m.get<std::string>();
      } else if (m.is_array() && !m.empty()) {
        for (const json& name : m) {
          if (!name.is_string()) throw HttpError(400, "field \"methods\" must be an array of method names");
          methods += (methods.empty() ? "" : ",") + name.get<std::string>();
        }
      } else {
        throw HttpError(400, "field \"methods\" must be a non-empty array of method names");
      }
    }
    int steps = 50;
    if (body.contains("steps")) {
      if (!body["steps"].is_number_integer()) throw HttpError(400, "field \"steps\" must be an integer");
      const std::int64_t given = body["steps"].get<std::int64_t>();
      if (given < 1 || given > options_.max_steps)
        throw HttpError(
            400, "field \"steps\" must be in 1.." + std::to_string(options_.max_steps) + " (--max-steps), got " + std::to_string(given));
      steps = static_cast<int>(given);
    }
    try {
      return tasks::explain_options(*served.model, methods, std::min(steps, options_.max_steps), "", "field \"methods\"");
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
  }

  Served& pick(const json& body) {
    if (!body.contains("model")) {
      if (served_.size() == 1) return served_.front();
      throw HttpError(400, "field \"model\" is required when several models are served");
    }
    if (!body["model"].is_string()) throw HttpError(400, "field \"model\" must be a string");
    const std::string name = body["model"];
    for (Served& s : served_)
      if (s.name == name) return s;
    std::string names;
    for (const Served& s : served_) names += (names.empty() ? "" : ", ") + s.name;
    throw HttpError(404, "no model '" + name + "' (models: " + names + ")");
  }

  ServeOptions options_;
  std::vector<Served> served_;
  std::unique_ptr<Batcher> batcher_;
  Metrics metrics_;
  std::atomic<bool> ready_{false};
};

}  // namespace

std::pair<std::string, std::string> parse_model_argument(const std::string& argument) {
  const std::size_t eq = argument.find('=');
  if (eq != std::string::npos) {
    if (eq == 0 || eq + 1 == argument.size()) throw std::invalid_argument("--model: expected NAME=PATH, got '" + argument + "'");
    return {argument.substr(0, eq), argument.substr(eq + 1)};
  }
  namespace fs = std::filesystem;
  const fs::path p = fs::path(argument).lexically_normal();
  std::string name = fs::is_directory(p) || !p.has_stem() ? p.filename().string() : p.stem().string();
  if (name == "model" && p.has_parent_path()) name = p.parent_path().filename().string();  // RUN_DIR/model.pt
  if (name.empty()) throw std::invalid_argument("--model: cannot name '" + argument + "'; give NAME=PATH");
  return {name, argument};
}

void serve(const ServeOptions& o, const std::function<void(const std::string&)>& log) {
  if (o.max_batch < 1 || o.max_delay_ms < 0 || o.max_queue < 1 || o.max_texts < 1 || o.max_body_bytes < 1 || o.connections < 1 ||
      o.workers < 1 || o.max_steps < 1)
    throw std::invalid_argument(
        "--max-batch, --max-queue, --max-texts, --max-body-bytes, --connections, --max-steps and --threads must be "
        ">= 1, --max-delay-ms >= 0");
  tasks::check_steps(o.max_steps, "--max-steps");
  if (o.port < 0 || o.port > 65535) throw std::invalid_argument("--port must be in 0..65535");
  Service service(o);
  // SIGTERM and SIGINT are taken by sigwait below, not by a handler: blocked here, before any thread
  // starts, so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  httplib::Server http;
  const int connections = o.connections;
  http.new_task_queue = [connections] { return new httplib::ThreadPool(static_cast<std::size_t>(connections)); };
  http.set_payload_max_length(o.max_body_bytes);
  http.set_tcp_nodelay(true);  // a response's header and body go out at once, not 40 ms apart (Nagle + delayed ACK)
  http.set_keep_alive_max_count(100);
  http.set_keep_alive_timeout(5);
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  service.routes(http);
  const int port = o.port == 0 ? http.bind_to_any_port(o.host) : (http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) throw std::runtime_error(o.host + ":" + std::to_string(o.port) + ": cannot listen (in use, or not an address here)");
  std::thread listener([&http] { http.listen_after_bind(); });
  for (int i = 0; i < 1000 && !http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  log("listening on http://" + o.host + ":" + std::to_string(port));
  const auto shut_down = [&] {
    service.drain();  // queued requests run now, not after --max-delay-ms
    http.stop();
    listener.join();  // the connections' threads finish the requests in flight
    service.stop();   // then the batcher runs what is still queued
  };
  try {
    service.load(log);
  } catch (...) {
    shut_down();
    throw;
  }
  log("ready");
  while (http.is_running()) {
    timespec second{1, 0};
    const int sig = sigtimedwait(&signals, nullptr, &second);
    if (sig == SIGTERM || sig == SIGINT) {
      log(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "): finishing the requests in flight");
      break;
    }
  }
  shut_down();
  log("stopped");
}

}  // namespace attn::server
