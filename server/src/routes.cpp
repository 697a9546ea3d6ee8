#include "routes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <future>
#include <stdexcept>

#include "attn/analyses/commands.h"
#include "attn/analyses/plausibility.h"

namespace attn::server {

using json = nlohmann::ordered_json;

namespace {

using Clock = std::chrono::steady_clock;

/// The explain page (page/explain.html, compiled in by CMake).
const char* kPage =
#include "explain_page.inc"
    ;

Response json_response(int status, const json& body) {
  Response r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The host name of a Host field ("name:port", "[v6]:port") or an Origin ("scheme://host:port").
std::string host_of(std::string value, bool origin) {
  if (origin) {
    const std::size_t scheme = value.find("://");
    if (scheme == std::string::npos) return "";
    value = value.substr(scheme + 3);
    value = value.substr(0, value.find('/'));
  }
  if (!value.empty() && value.front() == '[') return lower(value.substr(1, value.find(']') - 1));
  const std::size_t colon = value.rfind(':');
  if (colon != std::string::npos && value.find(':') == colon) value = value.substr(0, colon);
  return lower(value);
}

bool wildcard(const std::string& host) { return host == "0.0.0.0" || host == "::" || host == "[::]" || host.empty(); }

/// Whether a segment of `path` is "." or "..", also spelt with %2e (RFC 3986's dot segments).
bool dot_segment(const std::string& path) {
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find('/', begin), path.size());
    std::string segment;
    for (std::size_t i = begin; i < end; ++i) {
      if (path[i] == '%' && i + 2 < end && path[i + 1] == '2' && (path[i + 2] == 'e' || path[i + 2] == 'E')) {
        segment += '.';
        i += 2;
      } else {
        segment += path[i];
      }
    }
    if (segment == "." || segment == "..") return true;
    begin = end + 1;
  }
  return false;
}

}  // namespace

Api::Api(const ServeOptions& o, ApiKeys keys, ModelStore& store, std::function<std::size_t()> open_connections,
         std::function<void(const std::string&)> log)
    : options_(o), keys_(std::move(keys)), store_(store), open_connections_(std::move(open_connections)), log_(std::move(log)) {
  if (!o.access_log.empty() && o.access_log != "-") {
    access_log_ = std::fopen(o.access_log.c_str(), "a");
    if (!access_log_) throw std::invalid_argument("--access-log " + o.access_log + ": cannot open it for writing");
  } else if (o.access_log == "-") {
    access_log_ = stderr;
  }
  // The names this server answers to: loopback's, the bound address's (a wildcard: every interface's
  // and the host name), and --allowed-host's ('*': any). A DNS-rebinding page's requests carry its
  // own name, so they are refused.
  for (const char* name : {"localhost", "127.0.0.1", "::1"}) allowed_hosts_.insert(name);
  if (wildcard(o.host))
    for (const std::string& name : local_names()) allowed_hosts_.insert(lower(name));
  else
    allowed_hosts_.insert(host_of(o.host, false));
  for (const std::string& name : o.allowed_hosts) {
    if (name == "*") allow_any_host_ = true;
    allowed_hosts_.insert(lower(name));
  }
  routes_ = route_table();
  openapi_ = openapi(routes_, options_.version, !keys_.empty());
}

Api::~Api() {
  stop();
  if (access_log_ && access_log_ != stderr) std::fclose(access_log_);
}

void Api::load() {
  store_.load(log_);
  std::vector<std::vector<std::shared_ptr<tasks::TrainedModel>>> copies;
  for (std::size_t i = 0; i < store_.size(); ++i) copies.push_back(store_.current(i)->copies);
  batcher_ =
      std::make_unique<Batcher>(copies,
                                BatcherOptions{options_.max_batch, std::chrono::milliseconds(options_.max_delay_ms), options_.max_queue,
                                               options_.workers, std::chrono::milliseconds(options_.request_timeout_ms)},
                                [this](std::size_t n) { metrics_.batch(n); });
  ready_ = true;
}

void Api::drain() {
  if (batcher_) batcher_->drain();
}

void Api::stop() {
  if (batcher_) batcher_->stop();
}

void Api::require_ready() const {
  if (!ready_) throw HttpError(503, "models are loading");
}

bool Api::host_allowed(const std::string& host) const { return allow_any_host_ || allowed_hosts_.count(host) > 0; }

// ---- Before a route runs ----

std::optional<Response> Api::accept(Head& head) {
  // Host and Origin: only the names this server answers to (a DNS-rebinding page is refused).
  const auto host = head.field("host");
  const auto origin = head.field("origin");
  const auto refuse = [&](Response r) {
    record(head, r.status, 0);
    return r;
  };
  if (host && !host_allowed(host_of(*host, false)))
    return refuse(error_response(403, "Host '" + *host + "' is not a name this server answers to (--allowed-host adds one)"));
  if (origin && !host_allowed(host_of(*origin, true)))
    return refuse(error_response(403, "Origin '" + *origin + "' may not call this server (--allowed-host adds one)"));
  // The key, before the path is looked at (a stranger learns no route: every path but the public
  // ones answers 401) and before any body is read (a stranger's body is never read, let alone run).
  // A public path is one exactly as sent: /%68ealthz is not /healthz.
  const bool public_path = std::any_of(routes_.begin(), routes_.end(), [&](const Route& r) { return !r.needs_key && r.path == head.path; });
  if (!keys_.empty() && !public_path) {
    const auto authorization = head.field("authorization");
    const std::optional<std::string> name = keys_.check(authorization.value_or(""));
    if (!name) {
      Response r = error_response(
          401, authorization ? "the API key is not valid" : "an API key is required: send the header Authorization: Bearer KEY");
      r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"attn\""});
      return refuse(std::move(r));
    }
    head.principal = *name;
  }
  // A dot segment is refused rather than resolved: no path reaches a route by two spellings.
  if (dot_segment(head.path)) return refuse(error_response(400, "the path has a '.' or '..' segment: send it resolved"));
  // The route, then its method.
  const Route* found = nullptr;
  std::string allow;
  const std::string method = head.method == "HEAD" ? "GET" : head.method;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    if (!routes_[i].match(head.path)) continue;
    allow += (allow.empty() ? "" : ", ") + routes_[i].method;
    if (routes_[i].method == method) {
      found = &routes_[i];
      head.route = i;
    }
  }
  if (!found && allow.empty()) return refuse(error_response(404, "no such path"));
  if (!found) {
    Response r = error_response(405, head.method + " is not allowed on " + head.path + " (" + allow + ")");
    r.headers.push_back({"Allow", allow});
    return refuse(std::move(r));
  }
  return std::nullopt;
}

void Api::handle(Request request, Respond respond) {
  const Route& route = routes_.at(request.head.route);
  auto exchange = std::make_shared<Exchange>();
  exchange->parameters = *route.match(request.head.path);
  exchange->request = std::move(request);
  // (the exchange is kept alive by the callbacks that hold it; `answer` holds only a weak reference)
  std::weak_ptr<Exchange> weak = exchange;
  exchange->answer = [this, weak, respond = std::move(respond)](Response r) {
    if (const auto ex = weak.lock()) record(ex->request.head, r.status, ex->inputs);
    respond(std::move(r));
  };
  try {
    route.handler(exchange);
  } catch (const HttpError& e) {
    Response r = error_response(e.status, e.what());
    if (e.status == 503) r.headers.push_back({"Retry-After", "1"});
    exchange->answer(std::move(r));
  } catch (const std::exception& e) {
    exchange->answer(error_response(500, e.what()));
  }
}

void Api::refused(const std::string& reason, int status) { metrics_.refused(reason, status); }

// ---- The routes ----

std::vector<Route> Api::route_table() {
  const Schemas k = schemas();
  const json& string = k.string;
  const json& integer = k.integer;
  const auto reply = [](const std::shared_ptr<Exchange>& ex, const json& body) { ex->answer(json_response(200, body)); };
  std::vector<Route> table;
  table.push_back({"GET",
                   "/healthz",
                   false,
                   "Alive while the process serves",
                   nullptr,
                   {{"type", "object"}, {"required", {"status"}}, {"properties", {{"status", string}}}},
                   "application/json",
                   {},
                   [reply](const std::shared_ptr<Exchange>& ex) {
                     reply(ex, {{"status", "alive"}});
                   }});
  table.push_back({"GET",
                   "/readyz",
                   false,
                   "Ready once every model is loaded and warmed up (503 before)",
                   nullptr,
                   {{"type", "object"}, {"required", {"status", "models"}}, {"properties", {{"status", string}, {"models", integer}}}},
                   "application/json",
                   {},
                   [this, reply](const std::shared_ptr<Exchange>& ex) {
                     require_ready();
                     reply(ex, {{"status", "ready"}, {"models", store_.size()}});
                   }});
  table.push_back(
      {"GET",
       "/v1/models",
       true,
       "The models served: inputs, labels or features, config, methods, file digest",
       nullptr,
       {{"type", "object"}, {"required", {"models"}}, {"properties", {{"models", {{"type", "array"}, {"items", k.model_info}}}}}},
       "application/json",
       {},
       [this, reply](const std::shared_ptr<Exchange>& ex) {
         require_ready();
         json all = json::array();
         for (std::size_t i = 0; i < store_.size(); ++i) all.push_back(store_.current(i)->info);
         reply(ex, {{"models", all}});
       }});
  table.push_back({"POST",
                   "/v1/explain",
                   true,
                   "Explanations: what `attn explain --json` prints, per input",
                   k.explain_request,
                   k.results,
                   "application/json",
                   {400, 429},
                   [this](const std::shared_ptr<Exchange>& ex) { infer(ex, Mode::kExplain); }});
  table.push_back({"POST",
                   "/v1/predict",
                   true,
                   "The model's outputs only, per input",
                   k.inputs,
                   k.results,
                   "application/json",
                   {400},
                   [this](const std::shared_ptr<Exchange>& ex) { infer(ex, Mode::kPredict); }});
  table.push_back({"POST",
                   "/v1/models/{name}/reload",
                   true,
                   "Re-read the model's file; swapped in while requests continue",
                   nullptr,
                   {{"type", "object"}, {"required", {"reloaded"}}, {"properties", {{"reloaded", k.model_info}}}},
                   "application/json",
                   {422},
                   [this](const std::shared_ptr<Exchange>& ex) {
                     require_ready();
                     const std::string& name = ex->parameters.at(0);
                     const auto model = store_.find(name);
                     if (!model) throw HttpError(404, "no model '" + name + "'");
                     reload(*model, [ex](const json& info, const std::string& error) {
                       if (!error.empty())
                         ex->answer(error_response(422, "the model file could not be loaded; the loaded model still serves: " + error));
                       else
                         ex->answer(json_response(200, {{"reloaded", info}}));
                     });
                   }});
  table.push_back({"GET",
                   "/metrics",
                   true,
                   "Prometheus' text format",
                   nullptr,
                   nullptr,
                   "text/plain; version=0.0.4",
                   {},
                   [this](const std::shared_ptr<Exchange>& ex) {
                     Response r;
                     r.content_type = "text/plain; version=0.0.4";
                     r.body = metrics_.render(batcher_ ? batcher_->queued() : 0, ready_ ? store_.size() : 0, open_connections_());
                     ex->answer(std::move(r));
                   }});
  // The documentation and the page: public only with --public-docs (on a server with keys).
  table.push_back({"GET",
                   "/openapi.json",
                   !options_.public_docs,
                   "This description of the API (OpenAPI 3.0)",
                   nullptr,
                   {{"type", "object"}},
                   "application/json",
                   {},
                   [this, reply](const std::shared_ptr<Exchange>& ex) { reply(ex, openapi_); }});
  // The page is static (no model data); loaded without a key (--public-docs), it asks for one.
  table.push_back({"GET",
                   "/",
                   !options_.public_docs,
                   "The explain page",
                   nullptr,
                   nullptr,
                   "text/html; charset=utf-8",
                   {},
                   [](const std::shared_ptr<Exchange>& ex) {
                     Response r;
                     r.content_type = "text/html; charset=utf-8";
                     r.body = kPage;
                     ex->answer(std::move(r));
                   }});
  return table;
}

namespace {

/// A request's inputs, texts or rows as the model reads (400 when it sent the other kind, or none).
std::vector<tasks::Input> inputs_of(const InferBody& body, const tasks::TrainedModel& model, const std::string& name) {
  const std::string wanted = model.facts().input == tasks::ModelFacts::Input::kTexts ? "texts" : "rows";
  if ((wanted == "texts" && body.rows) || (wanted == "rows" && body.texts))
    throw HttpError(400, "model '" + name + "' reads \"" + wanted + "\", not \"" + (wanted == "texts" ? "rows" : "texts") + "\"");
  if (!body.texts && !body.rows) throw HttpError(400, "field \"" + wanted + "\" is required");
  std::vector<tasks::Input> inputs;
  if (body.texts)
    for (const std::string& text : *body.texts) inputs.push_back({text, {}});
  else
    for (const auto& row : *body.rows) inputs.push_back({"", row});
  return inputs;
}

/// The batcher's results answered: an error as its status (400 a bad input, 503 a time-out, 500
/// else), else {"model", "results"} with, where the request marked words, each method's plausibility.
void answer_results(Exchange& ex, const std::string& name, const std::optional<std::vector<std::vector<std::int64_t>>>& rationales,
                    Results results, const std::exception_ptr& error) {
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::invalid_argument& e) {
      return ex.answer(error_response(400, e.what()));
    } catch (const TimedOut& e) {
      Response r = error_response(503, e.what());
      r.headers.push_back({"Retry-After", "1"});
      return ex.answer(std::move(r));
    } catch (const std::exception& e) {
      return ex.answer(error_response(500, e.what()));
    }
  }
  if (rationales) {  // each method's plausibility against the words people marked
    try {
      for (std::size_t i = 0; i < results.size(); ++i) {
        if ((*rationales)[i].empty()) continue;
        nlohmann::ordered_json e = nlohmann::ordered_json::parse(results[i]);
        e["plausibility"] = analyses::explanation_plausibility(e, (*rationales)[i], 5, "rationales[" + std::to_string(i) + "]");
        results[i] = e.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      }
    } catch (const std::invalid_argument& e) {
      return ex.answer(error_response(400, e.what()));
    }
  }
  std::string out = "{\"model\":" + json(name).dump(-1, ' ', false, json::error_handler_t::replace) + ",\"results\":[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i) out += ',';
    out += results[i];
  }
  Response r;
  r.body = out + "]}";
  ex.answer(std::move(r));
}

}  // namespace

/// 413 when explaining `inputs` with `explain` would cost more than --max-request-cost.
void Api::check_cost(const tasks::TrainedModel& model, const std::vector<tasks::Input>& inputs,
                     const tasks::ExplainOptions& explain) const {
  // What the request would cost, before any of it runs (predict: one forward pass per input).
  // The bound needs no tokenising: most requests (a few texts, few methods) are far under the cap.
  const std::int64_t bound = model.request_cost_bound(inputs.size(), explain);
  if (options_.max_request_cost > 0 && (bound < 0 || bound > options_.max_request_cost)) {
    const std::int64_t cost = model.request_cost(inputs, explain);
    if (cost > options_.max_request_cost)
      throw HttpError(413, "the request would cost " + std::to_string(cost) + " (words read by forward passes, summed over its " +
                               std::to_string(inputs.size()) + " inputs); at most " + std::to_string(options_.max_request_cost) +
                               " per request (--max-request-cost): send fewer inputs, methods or steps");
  }
}

/// POST /v1/explain and /v1/predict: checked here, run by the batcher, answered from its thread.
void Api::infer(const std::shared_ptr<Exchange>& ex, Mode mode) {
  require_ready();
  const InferBody body = decode_infer(ex->request.body, mode == Mode::kExplain);
  const std::size_t model = pick(body.model);
  const std::string& name = store_.name(model);
  const std::shared_ptr<const Loaded> loaded = store_.current(model);  // one load throughout, even if a reload swaps it
  const tasks::TrainedModel& first = *loaded->copies.front();
  std::vector<tasks::Input> inputs = inputs_of(body, first, name);
  ex->inputs = inputs.size();
  if (inputs.size() > options_.max_texts)
    throw HttpError(
        413, std::to_string(inputs.size()) + " inputs; at most " + std::to_string(options_.max_texts) + " per request (--max-texts)");
  try {
    first.check(inputs);
  } catch (const std::invalid_argument& e) {
    throw HttpError(400, e.what());
  }
  const tasks::ExplainOptions explain = explain_options(body, first, mode);
  if (body.rationales && (first.facts().input != tasks::ModelFacts::Input::kTexts || first.facts().labels.empty()))
    throw HttpError(400, "field \"rationales\" scores a text classifier's word scores against people's marks; " + name + " is " +
                             tasks::describe_model(first.saved()));
  check_cost(first, inputs, explain);
  if (mode == Mode::kExplain && body.self_attention) mode = Mode::kExplainWithSelfAttention;
  // Importance methods cost up to hundreds of passes an input: a client address may have
  // --heavy-per-client such requests in flight, so one client cannot fill the inference threads.
  const bool heavy = !explain.methods.empty();
  const std::string client = ex->request.head.client;
  if (heavy) {
    std::lock_guard<std::mutex> lock(heavy_mutex_);
    std::size_t& mine = heavy_[client];
    if (mine >= options_.heavy_per_client) {
      Response r =
          error_response(429, "this address has " + std::to_string(mine) +
                                  " explanations with importance methods in flight (--heavy-per-client); retry when one is answered");
      r.headers.push_back({"Retry-After", "1"});
      return ex->answer(std::move(r));
    }
    ++mine;
  }
  const auto release = [this, heavy, client] {
    if (!heavy) return;
    std::lock_guard<std::mutex> lock(heavy_mutex_);
    if (--heavy_[client] == 0) heavy_.erase(client);
  };
  try {
    batcher_->submit(model, mode, std::move(inputs), explain,
                     [ex, name, release, rationales = body.rationales](Results results, std::exception_ptr error) {
                       release();
                       answer_results(*ex, name, rationales, std::move(results), error);
                     });
  } catch (const QueueFull& e) {
    release();
    throw HttpError(503, e.what());
  } catch (const Stopped& e) {
    release();
    throw HttpError(503, e.what());
  }
}

/// "methods" (names) and "steps" of /v1/explain as the tasks' options.
tasks::ExplainOptions Api::explain_options(const InferBody& body, const tasks::TrainedModel& model, Mode mode) const {
  if (mode == Mode::kPredict) return {};
  int steps = models::kDefaultSteps;
  if (body.steps) {
    if (*body.steps < 1 || *body.steps > options_.max_steps)
      throw HttpError(400, "field \"steps\" must be in 1.." + std::to_string(options_.max_steps) + " (--max-steps), got " +
                               std::to_string(*body.steps));
    steps = static_cast<int>(*body.steps);
  }
  try {
    return tasks::explain_options(model, body.methods, std::min(steps, options_.max_steps), "", "field \"methods\"");
  } catch (const std::invalid_argument& e) {
    throw HttpError(400, e.what());
  }
}

std::size_t Api::pick(const std::optional<std::string>& name) const {
  if (!name) {
    if (store_.size() == 1) return 0;
    throw HttpError(400, "field \"model\" is required when several models are served");
  }
  if (const auto model = store_.find(*name)) return *model;
  throw HttpError(404, "no model '" + *name + "' (models: " + store_.names() + ")");
}

void Api::reload(std::size_t model, std::function<void(const json& info, const std::string& error)> then) {
  const std::string name = store_.name(model);
  store_.reload(model, [this, model, name, then = std::move(then)](std::shared_ptr<const Loaded> fresh, std::exception_ptr error) {
    if (error) {
      std::string why = "unknown error";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        why = e.what();
      }
      metrics_.reload(name, false);
      log_("reload of " + name + " failed, the loaded model still serves: " + why);
      return then(json(), why);
    }
    batcher_->replace(model, fresh->copies);  // batches formed from now on run on the new copies
    store_.install(model, fresh);
    metrics_.reload(name, true);
    log_("reloaded " + name + " (sha256 " + fresh->info.at("sha256").get<std::string>().substr(0, 12) + ")");
    then(fresh->info, "");
  });
}

void Api::reload_all() {
  for (std::size_t i = 0; i < store_.size(); ++i) {
    std::promise<void> done;
    reload(i, [&done](const json&, const std::string&) { done.set_value(); });  // (a failure is logged)
    done.get_future().wait();
  }
}

// ---- Metrics and the access log ----

void Api::record(const Head& head, int status, std::size_t inputs) {
  std::string route = "other";  // (unknown paths share one label, so they cannot grow the label set)
  for (const Route& r : routes_)
    if (r.match(head.path)) route = r.path;
  const double seconds = std::chrono::duration<double>(Clock::now() - head.started).count();
  metrics_.request(route, status, seconds, head.principal);
  if (access_log_) log_access(head, status, seconds, inputs);
}

/// One JSON line per request: time (UTC), client, method, path, status, duration, inputs, key name.
void Api::log_access(const Head& head, int status, double seconds, std::size_t inputs) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(ms));
  json line = {
      {"time", std::string(stamp) + fraction}, {"client", head.client}, {"method", head.method}, {"path", head.path}, {"status", status},
      {"ms", std::round(seconds * 1e6) / 1e3}, {"inputs", inputs}};
  if (!head.principal.empty()) line["key"] = head.principal;
  const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(access_mutex_);
  std::fputs(text.c_str(), access_log_);
  std::fflush(access_log_);
}

}  // namespace attn::server
