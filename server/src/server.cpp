#include "attn/server/server.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <fstream>
#include <regex>
#include <memory>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "attn/server/batcher.h"
#include "attn/server/metrics.h"
#include "api.h"
#include "auth.h"
#include "front.h"
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

/// One load of a model file: a copy per inference thread (loaded apart: a module's methods run on
/// one thread at a time) and what /v1/models says of it. A reload makes a new one and swaps it in.
struct Loaded {
  std::vector<std::shared_ptr<tasks::TrainedModel>> copies;
  json info;
};

struct Served {
  std::string name, path;
  std::shared_ptr<const Loaded> loaded;  ///< read and swapped with std::atomic_load / atomic_store
  std::shared_ptr<const Loaded> current() const { return std::atomic_load(&loaded); }
};

/// SHA-256 of a file, as hex (the model file's digest in /v1/models).
std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read it");
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("SHA-256 (OpenSSL) failed");
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    EVP_DigestUpdate(ctx.get(), chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  static const char* const kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += {kHex[digest[i] >> 4], kHex[digest[i] & 15]};
  return hex;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

/// The one thread that loads reloaded models. glibc gives each thread its own heap and the server
/// keeps freed memory (the app's profile), so a load on whichever HTTP thread asked grew another
/// heap by a model's size each time, up to one per heap (measured: +7.7 MB per reload for the first
/// 13 reloads); loads on one thread reuse one heap.
class Loader {
 public:
  Loader() : thread_([this] { loop(); }) {}
  ~Loader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  template <class F>
  auto run(F f) -> std::future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
    auto result = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back([task] { (*task)(); });
    }
    wake_.notify_all();
    return result;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // (last: started once the rest is ready)
};

class Service {
 public:
  Service(const ServeOptions& o, ApiKeys keys) : options_(o), keys_(std::move(keys)) {
    if (!o.access_log.empty() && o.access_log != "-") {
      access_log_ = std::fopen(o.access_log.c_str(), "a");
      if (!access_log_) throw std::invalid_argument("--access-log " + o.access_log + ": cannot open it for writing");
    } else if (o.access_log == "-") {
      access_log_ = stderr;
    }
    for (const std::string& argument : o.models) {
      auto [name, path] = parse_model_argument(argument);
      for (const Served& s : served_)
        if (s.name == name) throw std::invalid_argument("--model: two models are called '" + name + "'");
      served_.push_back({name, path, nullptr});
    }
    if (served_.empty()) throw std::invalid_argument("--model NAME=PATH is required (one or more)");
  }

  /// Loads each model once per inference thread, refusing a bad one with its name, and runs each
  /// copy on its examples (the first runs of a TorchScript method pay for its setup).
  void load(const std::function<void(const std::string&)>& log) {
    std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> models;
    for (Served& s : served_) {
      s.loaded = load_file(s);
      models.push_back(s.loaded->copies);
      log("loaded " + s.name + ": " + s.loaded->info.at("model").get<std::string>() + " from " + s.loaded->info.at("path").get<std::string>() +
          " (sha256 " + s.loaded->info.at("sha256").get<std::string>().substr(0, 12) + ")");
    }
    batcher_ = std::make_unique<Batcher>(
        models,
        BatcherOptions{options_.max_batch, std::chrono::milliseconds(options_.max_delay_ms), options_.max_queue, options_.workers,
                       std::chrono::milliseconds(options_.request_timeout_ms)},
        [this](std::size_t n) { metrics_.batch(n); });
    ready_ = true;
  }

  /// Re-reads model `name`'s file while requests continue: the new copies are loaded, checked (the
  /// file's checksums, a warm-up on its examples) and swapped in; requests already batched finish on
  /// the old ones. A file that fails leaves the old model serving: HttpError 422 saying why.
  json reload(const std::string& name, const std::function<void(const std::string&)>& log) {
    Served* found = nullptr;
    for (Served& s : served_)
      if (s.name == name) found = &s;
    if (!found) throw HttpError(404, "no model '" + name + "'");
    std::lock_guard<std::mutex> one_at_a_time(reload_mutex_);
    std::shared_ptr<const Loaded> fresh;
    try {
      fresh = loader_.run([this, found] { return load_file(*found); }).get();
    } catch (const std::exception& e) {
      metrics_.reload(name, false);
      log("reload of " + name + " failed, the loaded model still serves: " + e.what());
      throw HttpError(422, std::string("the model file could not be loaded; the loaded model still serves: ") + e.what());
    }
    batcher_->replace(static_cast<std::size_t>(found - served_.data()), fresh->copies);
    std::atomic_store(&found->loaded, fresh);
    metrics_.reload(name, true);
    log("reloaded " + name + " (sha256 " + fresh->info.at("sha256").get<std::string>().substr(0, 12) + ")");
    return fresh->info;
  }

  /// Every model, as SIGHUP asks: each one that fails keeps serving its loaded model.
  void reload_all(const std::function<void(const std::string&)>& log) {
    for (const Served& s : served_) {
      try {
        reload(s.name, log);
      } catch (const HttpError&) {  // logged
      }
    }
  }

  /// Runs what is queued without waiting for company (requests in flight finish promptly).
  void drain() {
    if (batcher_) batcher_->drain();
  }
  void stop() {
    if (batcher_) batcher_->stop();
  }

  /// One load of `s`'s file: a copy per inference thread, each warmed up; its description.
  std::shared_ptr<const Loaded> load_file(const Served& s) const {
    auto loaded = std::make_shared<Loaded>();
    try {
      for (int w = 0; w < options_.workers; ++w) loaded->copies.push_back(tasks::open_model(s.path));
      tasks::TrainedModel& first = *loaded->copies.front();
      const std::vector<tasks::Input> warm = first.read_inputs(first.examples(), data::Inputs{}, nullptr);
      for (const auto& m : loaded->copies) {
        m->predict(warm, options_.max_batch);
        m->explain(warm, options_.max_batch);
      }
      const models::SavedModel& saved = first.saved();
      json& info = loaded->info;
      info = {{"name", s.name}, {"model", saved.entry->name}, {"path", saved.path}, {"sha256", file_sha256(saved.path)}, {"loaded_at", utc_now()}};
      const json described = first.describe();
      for (const auto& [key, value] : described.items()) info[key] = value;
      info["config"] = saved.config.at("model_config");
      info["methods"] = json::array();
      for (models::Method m : first.methods()) info["methods"].push_back(models::method_name(m));
      info["max_steps"] = options_.max_steps;
      info["examples"] = first.examples();
    } catch (const std::exception& e) {
      throw std::runtime_error("model '" + s.name + "' (" + s.path + "): " + e.what());
    }
    return loaded;
  }

  /// Every route: the table the router, the key check, the metrics and /openapi.json all read.
  std::vector<Route> route_table(const Front& front, const std::function<void(const std::string&)>& log) {
    const json string = {{"type", "string"}}, integer = {{"type", "integer"}};
    const json model_info = {{"type", "object"},
                             {"required", {"name", "model", "task", "input", "path", "sha256", "loaded_at", "config", "methods", "max_steps", "examples"}},
                             {"properties",
                              {{"name", string},
                               {"model", string},
                               {"task", string},
                               {"input", {{"type", "string"}, {"enum", {"texts", "rows"}}}},
                               {"path", string},
                               {"sha256", {{"type", "string"}, {"pattern", "^[0-9a-f]{64}$"}}},
                               {"loaded_at", {{"type", "string"}, {"format", "date-time"}}},
                               {"config", {{"type", "object"}}},
                               {"methods", {{"type", "array"}, {"items", string}}},
                               {"max_steps", integer},
                               {"examples", {{"type", "array"}, {"items", string}}}}}};
    const json inputs = {
        {"type", "object"},
        {"properties",
         {{"model", {{"type", "string"}, {"description", "the model's name (optional when one model is served)"}}},
          {"texts", {{"type", "array"}, {"items", string}, {"minItems", 1}}},
          {"rows", {{"type", "array"}, {"items", {{"type", "array"}, {"items", {{"type", "number"}}}}}, {"minItems", 1}}}}}};
    json explain_request = inputs;
    explain_request["properties"]["self_attention"] = {{"type", "boolean"}};
    explain_request["properties"]["methods"] = {{"oneOf", {{{"type", "array"}, {"items", string}}, string}}};
    explain_request["properties"]["steps"] = integer;
    const json results = {{"type", "object"},
                          {"required", {"model", "results"}},
                          {"properties", {{"model", string}, {"results", {{"type", "array"}, {"items", {{"type", "object"}}}}}}}};
    std::vector<Route> table;
    table.push_back({"GET", "/healthz", false, "Alive while the process serves", nullptr,
                     {{"type", "object"}, {"required", {"status"}}, {"properties", {{"status", string}}}}, "application/json", {},
                     [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, {{"status", "alive"}}); }});
    table.push_back({"GET", "/readyz", false, "Ready once every model is loaded and warmed up (503 before)", nullptr,
                     {{"type", "object"}, {"required", {"status", "models"}}, {"properties", {{"status", string}, {"models", integer}}}},
                     "application/json", {}, [this](const httplib::Request&, httplib::Response& res) {
                       if (ready_)
                         send_json(res, 200, {{"status", "ready"}, {"models", served_.size()}});
                       else
                         send_error(res, 503, "models are loading");
                     }});
    table.push_back({"GET", "/v1/models", true, "The models served: inputs, labels or features, config, methods, file digest",
                     nullptr,
                     {{"type", "object"}, {"required", {"models"}}, {"properties", {{"models", {{"type", "array"}, {"items", model_info}}}}}},
                     "application/json", {}, [this](const httplib::Request&, httplib::Response& res) {
                       require_ready();
                       json all = json::array();
                       for (const Served& s : served_) all.push_back(s.current()->info);
                       send_json(res, 200, {{"models", all}});
                     }});
    table.push_back({"POST", "/v1/explain", true, "Explanations: what `attn explain --json` prints, per input", explain_request, results,
                     "application/json", {400}, [this](const httplib::Request& req, httplib::Response& res) { infer(req, res, Mode::kExplain); }});
    table.push_back({"POST", "/v1/predict", true, "The model's outputs only, per input", inputs, results, "application/json", {400},
                     [this](const httplib::Request& req, httplib::Response& res) { infer(req, res, Mode::kPredict); }});
    table.push_back({"POST", "/v1/models/{name}/reload", true, "Re-read the model's file; swapped in while requests continue", nullptr,
                     {{"type", "object"}, {"required", {"reloaded"}}, {"properties", {{"reloaded", model_info}}}}, "application/json", {422},
                     [this, log](const httplib::Request& req, httplib::Response& res) {
                       require_ready();
                       send_json(res, 200, {{"reloaded", reload(req.matches[1], log)}});
                     }});
    table.push_back({"GET", "/metrics", true, "Prometheus' text format", nullptr, nullptr, "text/plain; version=0.0.4", {},
                     [this, &front](const httplib::Request&, httplib::Response& res) {
                       res.set_content(metrics_.render(batcher_ ? batcher_->queued() : 0, ready_ ? served_.size() : 0, front.open_connections()),
                                       "text/plain; version=0.0.4");
                     }});
    table.push_back({"GET", "/openapi.json", true, "This description of the API (OpenAPI 3.0)", nullptr, {{"type", "object"}}, "application/json", {},
                     [this](const httplib::Request&, httplib::Response& res) { send_json(res, 200, openapi_); }});
    // The page is static (no model data): it loads without a key and asks for one when the API does.
    table.push_back({"GET", "/", false, "The explain page", nullptr, nullptr, "text/html; charset=utf-8", {},
                     [](const httplib::Request&, httplib::Response& res) { res.set_content(kPage, "text/html; charset=utf-8"); }});
    return table;
  }

  void routes(httplib::Server& http, const Front& front, const std::function<void(const std::string&)>& log) {
    routes_ = route_table(front, log);
    for (const Route& r : routes_) route_patterns_.emplace_back(r.pattern());
    openapi_ = openapi(routes_, options_.version, !keys_.empty());
    std::map<std::string, std::string> allowed;  // pattern -> its methods
    for (const Route& r : routes_) {
      if (r.method == "GET") http.Get(r.pattern(), r.handler);
      if (r.method == "POST") http.Post(r.pattern(), r.handler);
      allowed[r.pattern()] += (allowed[r.pattern()].empty() ? "" : ", ") + r.method;
    }
    // The other methods on known paths: 405 with Allow.
    for (const auto& [pattern, methods] : allowed) not_allowed(http, pattern, methods);
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
    // Every route but the probes and the page (static; its API calls carry the key the user gives
    // it) needs a key when keys are set. Before routing, so no handler runs for a stranger.
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      context() = RequestContext{Clock::now(), "", 0};
      const Route* route = route_of(req.path);
      if (keys_.empty() || (route && !route->needs_key)) return httplib::Server::HandlerResponse::Unhandled;
      const std::optional<std::string> name = keys_.check(req.get_header_value("Authorization"));
      if (!name) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"attn\"");
        send_error(res, 401,
                   req.has_header("Authorization") ? "the API key is not valid"
                                                   : "an API key is required: send the header Authorization: Bearer KEY");
        return httplib::Server::HandlerResponse::Handled;
      }
      context().key = *name;
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      const Route* known = route_of(req.path);
      const std::string route = known ? known->path : "other";
      const double seconds = std::chrono::duration<double>(Clock::now() - context().started).count();
      metrics_.request(route, res.status, seconds, context().key);
      if (access_log_) log_access(req, res, seconds);
    });
  }

  ~Service() {
    if (access_log_ && access_log_ != stderr) std::fclose(access_log_);
  }

 private:
  /// What the access log and the metrics say of the request an HTTP thread is answering.
  struct RequestContext {
    Clock::time_point started;
    std::string key;         ///< the API key's name ("" without keys)
    std::size_t inputs = 0;  ///< texts or rows in the body
  };
  static RequestContext& context() {
    thread_local RequestContext c;
    return c;
  }

  /// One JSON line per request: time (UTC), client, method, path, status, duration, inputs, key name.
  void log_access(const httplib::Request& req, const httplib::Response& res, double seconds) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm utc{};
    gmtime_r(&t, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    char fraction[8];
    std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(ms));
    json line = {{"time", std::string(stamp) + fraction},
                 {"client", req.remote_addr},
                 {"method", req.method},
                 {"path", req.path},
                 {"status", res.status},
                 {"ms", std::round(seconds * 1e6) / 1e3},
                 {"inputs", context().inputs}};
    if (!context().key.empty()) line["key"] = context().key;
    const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::lock_guard<std::mutex> lock(access_mutex_);
    std::fputs(text.c_str(), access_log_);
    std::fflush(access_log_);
  }

  /// The route a path is served by (any method), or null.
  const Route* route_of(const std::string& path) const {
    for (std::size_t i = 0; i < routes_.size(); ++i)
      if (routes_[i].path == path || (routes_[i].path.find('{') != std::string::npos && std::regex_match(path, route_patterns_[i])))
        return &routes_[i];
    return nullptr;
  }

  static void not_allowed(httplib::Server& http, const std::string& path, const std::string& allow) {
    const auto handler = [allow](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      send_error(res, 405, req.method + " is not allowed on " + req.path + " (" + allow + ")");
    };
    if (allow.find("GET") == std::string::npos) http.Get(path, handler);
    if (allow.find("POST") == std::string::npos) http.Post(path, handler);
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
    const std::shared_ptr<const Loaded> loaded = served.current();  // one load throughout, even if a reload swaps it
    tasks::TrainedModel& model = *loaded->copies.front();
    const std::string wanted = loaded->info.at("input");  // "texts" or "rows"
    const std::string other = wanted == "texts" ? "rows" : "texts";
    if (body.contains(other)) throw HttpError(400, "model '" + served.name + "' reads \"" + wanted + "\", not \"" + other + "\"");
    if (!body.contains(wanted)) throw HttpError(400, "field \"" + wanted + "\" is required");
    const json& items = body[wanted];
    if (!items.is_array()) throw HttpError(400, "field \"" + wanted + "\" must be an array");
    if (items.empty()) throw HttpError(400, "field \"" + wanted + "\" is empty");
    context().inputs = items.size();
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
      model.check(inputs);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
    const tasks::ExplainOptions explain = explain_options(body, model, mode);
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
    } catch (const TimedOut& e) {
      res.set_header("Retry-After", "1");
      throw HttpError(503, e.what());
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
  tasks::ExplainOptions explain_options(const json& body, const tasks::TrainedModel& model, Mode mode) const {
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
      return tasks::explain_options(model, methods, std::min(steps, options_.max_steps), "", "field \"methods\"");
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
  ApiKeys keys_;
  std::FILE* access_log_ = nullptr;
  std::mutex access_mutex_;
  std::vector<Served> served_;
  std::mutex reload_mutex_;
  Loader loader_;
  std::vector<Route> routes_;
  std::vector<std::regex> route_patterns_;  ///< routes_' patterns, compiled once
  json openapi_;

 public:
  Metrics& metrics() { return metrics_; }
  bool authenticated() const { return !keys_.empty(); }

 private:
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
      o.workers < 1 || o.max_steps < 1 || o.max_connections < 1 || o.connections_per_client < 1 || o.client_timeout_ms < 1 ||
      o.keep_alive_ms < 1 || o.request_timeout_ms < 0)
    throw std::invalid_argument(
        "--max-batch, --max-queue, --max-texts, --max-body-bytes, --connections, --max-connections, "
        "--connections-per-client, --client-timeout-ms, --keep-alive-ms, --max-steps and --threads must be >= 1, "
        "--max-delay-ms and --request-timeout-ms >= 0");
  tasks::check_steps(o.max_steps, "--max-steps");
  if (o.port < 0 || o.port > 65535) throw std::invalid_argument("--port must be in 0..65535");
  if (!o.api_key_file.empty() && !o.api_key.empty()) throw std::invalid_argument("give --api-key-file or ATTN_API_KEY, not both");
  ApiKeys keys = !o.api_key_file.empty() ? ApiKeys::from_file(o.api_key_file)
                 : !o.api_key.empty()    ? ApiKeys::from_value(o.api_key, "env")
                                         : ApiKeys();
  if (keys.empty() && !is_loopback(o.host) && !o.allow_unauthenticated)
    throw std::invalid_argument("--host " + o.host +
                                " is reachable from other machines: give --api-key-file F (or ATTN_API_KEY), or "
                                "--allow-unauthenticated to serve anyone who can connect");
  // SIGTERM and SIGINT are taken by sigwait below, not by a handler: blocked here, before any thread
  // starts, so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // reload the models' files
  sigset_t blocked = signals;
  sigaddset(&blocked, SIGPIPE);  // a client gone mid-response is an error from send, not the end of the process
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  Service service(o, std::move(keys));

  // The front end reads every connection (a slow client costs no thread) and hands whole requests
  // to cpp-httplib's router on the --connections HTTP threads.
  Router router;
  router.set_payload_max_length(o.max_body_bytes);
  FrontOptions front_options;
  front_options.host = o.host;
  front_options.port = o.port;
  front_options.threads = o.connections;
  front_options.max_connections = o.max_connections;
  front_options.per_client = o.connections_per_client;
  front_options.max_body = o.max_body_bytes;
  front_options.request_read = std::chrono::milliseconds(o.client_timeout_ms);
  front_options.keep_alive = std::chrono::milliseconds(o.keep_alive_ms);
  front_options.tls_cert = o.tls_cert;
  front_options.tls_key = o.tls_key;
  Front front(front_options, router, [&service](const std::string& reason, int status) { service.metrics().refused(reason, status); });
  service.routes(router, front, log);
  const int port = front.bind();
  front.start();
  log(std::string("listening on ") + (o.tls_cert.empty() ? "http" : "https") + "://" + o.host + ":" + std::to_string(port));
  const auto shut_down = [&] {
    service.drain();  // queued requests run now, not after --max-delay-ms
    front.stop();     // no new connections; the requests in flight finish
    service.stop();   // then the batcher runs what is still queued
  };
  try {
    service.load(log);
  } catch (...) {
    shut_down();
    throw;
  }
  log(std::string("ready") + (service.authenticated() ? " (API keys required)" : ""));
  for (;;) {
    const int sig = sigwaitinfo(&signals, nullptr);
    if (sig == SIGHUP) {
      log("SIGHUP: reloading the models");
      service.reload_all(log);
      continue;
    }
    if (sig == SIGTERM || sig == SIGINT) {
      log(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "): finishing the requests in flight");
      break;
    }
  }
  shut_down();
  log("stopped");
}

}  // namespace attn::server
