#include "attn/server/server.h"

#include <filesystem>
#include <stdexcept>

#include "attn/tasks/task.h"
#include "http.h"
#include "models.h"
#include "routes.h"

namespace attn::server {

std::pair<std::string, std::string> parse_model_argument(const std::string& argument) {
  const std::size_t eq = argument.find('=');
  if (eq != std::string::npos) {
    if (eq == 0 || eq + 1 == argument.size()) throw std::invalid_argument("--model: expected NAME=PATH, got '" + argument + "'");
    return {argument.substr(0, eq), argument.substr(eq + 1)};
  }
  namespace fs = std::filesystem;
  fs::path p = fs::path(argument).lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "runs/toxic/" (as a shell completes it): the directory
  std::string name = fs::is_directory(p) || !p.has_stem() ? p.filename().string() : p.stem().string();
  if (name == "model" && p.has_parent_path()) name = p.parent_path().filename().string();  // RUN_DIR/model.pt
  if (name.empty()) throw std::invalid_argument("--model: cannot name '" + argument + "'; give NAME=PATH");
  return {name, argument};
}

namespace {

const ServeOptions& checked(const ServeOptions& o) {
  if (o.max_batch < 1 || o.max_delay_ms < 0 || o.max_queue < 1 || o.max_texts < 1 || o.max_body_bytes < 1 || o.http_threads < 1 ||
      o.workers < 1 || o.max_steps < 1 || o.max_connections < 1 || o.connections_per_client < 1 || o.heavy_per_client < 1 ||
      o.client_timeout_ms < 1 || o.keep_alive_ms < 1 || o.write_timeout_ms < 1 || o.request_timeout_ms < 0)
    throw std::invalid_argument(
        "--max-batch, --max-queue, --max-texts, --max-body-bytes, --http-threads, --max-connections, --connections-per-client, "
        "--heavy-per-client, --client-timeout-ms, --keep-alive-ms, --write-timeout-ms, --max-steps and --threads must be >= 1, "
        "--max-delay-ms and --request-timeout-ms >= 0");
  tasks::check_steps(o.max_steps, "--max-steps");
  if (o.port < 0 || o.port > 65535) throw std::invalid_argument("--port must be in 0..65535");
  if (!o.api_key_file.empty() && !o.api_key.empty()) throw std::invalid_argument("give --api-key-file or ATTN_API_KEY, not both");
  return o;
}

ApiKeys keys_of(const ServeOptions& o) {
  ApiKeys keys = !o.api_key_file.empty() ? ApiKeys::from_file(o.api_key_file)
                 : !o.api_key.empty()    ? ApiKeys::from_value(o.api_key, "env")
                                         : ApiKeys();
  if (keys.empty() && !is_loopback(o.host) && !o.allow_unauthenticated)
    throw std::invalid_argument("--host " + o.host +
                                " is reachable from other machines: give --api-key-file F (or ATTN_API_KEY), or "
                                "--allow-unauthenticated to serve anyone who can connect");
  return keys;
}

HttpOptions http_options(const ServeOptions& o) {
  HttpOptions h;
  h.host = o.host;
  h.port = o.port;
  h.threads = o.http_threads;
  h.max_connections = o.max_connections;
  h.per_client = o.connections_per_client;
  h.max_body = o.max_body_bytes;
  h.request_read = std::chrono::milliseconds(o.client_timeout_ms);
  h.keep_alive = std::chrono::milliseconds(o.keep_alive_ms);
  h.write_timeout = std::chrono::milliseconds(o.write_timeout_ms);
  h.linger = std::chrono::milliseconds(o.linger_ms);
  h.linger_bytes = o.linger_bytes;
  h.tls_cert = o.tls_cert;
  h.tls_key = o.tls_key;
  return h;
}

}  // namespace

struct Server::Impl {
  Impl(const ServeOptions& o, std::function<void(const std::string&)> l)
      : log(std::move(l)),
        store(checked(o).models, o.workers, o.max_batch, o.max_steps),
        api(
            o, keys_of(o), store, [this] { return http.open_connections(); }, log),
        http(http_options(o), api) {}

  std::function<void(const std::string&)> log;
  ModelStore store;
  Api api;
  HttpServer http;  // (last: stopped and destroyed first, while the batcher still answers)
  bool stopped = false;
};

Server::Server(const ServeOptions& o, std::function<void(const std::string&)> log) : impl_(std::make_unique<Impl>(o, std::move(log))) {
  const int port = impl_->http.bind();
  impl_->http.start();
  impl_->log(std::string("listening on ") + (impl_->http.tls() ? "https" : "http") + "://" + o.host + ":" + std::to_string(port));
  try {
    impl_->api.load();
  } catch (...) {
    stop();
    throw;
  }
  impl_->log(std::string("ready") + (impl_->api.authenticated() ? " (API keys required)" : ""));
}

Server::~Server() { stop(); }

void Server::reload_all() { impl_->api.reload_all(); }

void Server::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->api.drain();  // queued requests run now, not after --max-delay-ms
  impl_->http.stop();  // no new connections; the requests in flight are answered
  impl_->api.stop();   // then the batcher ends
}

}  // namespace attn::server
