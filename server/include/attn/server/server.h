#pragma once
/// `attn serve`: trained models over HTTP, with dynamic batching (batcher.h), metrics for Prometheus
/// (metrics.h) and an explain page for the browser (page/explain.html). The server calls the tasks'
/// predict and explain (lib/include/attn/tasks/task.h) and knows no task itself. Its parts
/// (server/src): the connection layer (http.h: Boost.Beast, the one HTTP parser; limits, deadlines,
/// TLS), request decoding (request.h), the routes and the OpenAPI schema (routes.h, api.h), the
/// model store with reload (models.h).
///
///   GET  /healthz      200 while the process serves
///   GET  /readyz       200 once every model is loaded and warmed up, 503 before
///   GET  /v1/models    per model: name, registry model, task, its inputs, labels or features, config, examples,
///                      the importance methods it gives, max_steps, the file's name and SHA-256
///   POST /v1/explain   {"model": NAME, "texts": [...]} or {"rows": [[...], ...]} (+ "self_attention": true,
///                      "methods": ["integrated-gradients", ...], "steps": N <= --max-steps)
///                      -> {"model": NAME, "results": [what `attn explain --json [--methods ...]` prints, per input]}
///   POST /v1/predict   the same body -> {"model": NAME, "results": [outputs only, per input]}
///   POST /v1/models/NAME/reload  re-read the model's file and swap it in while requests continue
///   GET  /metrics      Prometheus' text format
///   GET  /openapi.json this API as OpenAPI 3.0 (made from the route table, src/api.h)
///   GET  /             the explain page (?model=NAME&text=...&text2=... opens explained)
/// With API keys, a request without a valid `Authorization: Bearer KEY` gets 401 (WWW-Authenticate)
/// before its body is read. Errors: {"error": {"status": N, "message": "..."}} with 400 (malformed
/// JSON, missing or mistyped fields, invalid UTF-8, numbers out of range, bad inputs; ambiguous
/// framing), 403 (a Host or Origin not allowed), 404 (unknown path or model), 405 (wrong method),
/// 408 (not whole within --client-timeout-ms), 411, 413 (body too large, too many inputs), 415,
/// 429 (--connections-per-client, --heavy-per-client), 431, 503 (queue full, --max-connections
/// running requests, with Retry-After; models still loading).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::server {

struct ServeOptions {
  std::vector<std::string> models;  ///< NAME=PATH, or PATH (named after the run directory or file)
  std::string host = "127.0.0.1";
  int port = 8080;               ///< 0: any free port
  std::int64_t max_batch = 64;   ///< inputs per batch
  int max_delay_ms = 0;          ///< how long a request waits for company (0: batch what queued meanwhile)
  std::size_t max_queue = 1024;  ///< inputs that may wait; more: 503
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_texts = 256;        ///< inputs per request; more: 413
  int http_threads = 2;               ///< the connection layer's event-loop threads (they never wait for a model)
  std::size_t max_connections = 512;  ///< open client connections; more: the longest idle (else the oldest unfinished) closes, else 503
  std::size_t connections_per_client = 128;  ///< per client address; more: 429
  std::size_t heavy_per_client = 4;          ///< explanations with importance methods in flight per client address; more: 429
  int client_timeout_ms = 10000;             ///< a handshake, and a request's headers and body, must arrive within it; else 408
  int keep_alive_ms = 5000;                  ///< an idle connection closes after it
  int write_timeout_ms = 10000;              ///< a response must be written within it (a client that does not read is closed)
  int request_timeout_ms = 30000;            ///< a request still queued after it: 503, its work dropped (0: never)
  int workers = 1;                           ///< inference threads (each batch runs on one LibTorch thread)
  int max_steps = 64;                        ///< integrated gradients' steps a request may ask for
  /// A request's cost (TrainedModel::request_cost: words read times passes, summed over its inputs)
  /// above it: 413 before any work (0: no cap). The default, about 13 CPU-seconds of a BiLSTM here,
  /// takes 256 texts of 200 words explained by attention, or one such text by every method.
  std::int64_t max_request_cost = 10000000;
  int linger_ms = 2000;                    ///< after refusing a body still arriving, read and drop it for at most this long
  std::size_t linger_bytes = 16 << 20;     ///< ... or this many bytes
  std::string api_key_file;                ///< keys, one per line (auth.h); every path but /healthz and /readyz needs one
  std::string api_key;                     ///< or one key (the app passes ATTN_API_KEY)
  bool allow_unauthenticated = false;      ///< needed to serve a non-loopback --host without keys
  bool public_docs = false;                ///< with keys, the page and /openapi.json still load without one
  std::vector<std::string> allowed_hosts;  ///< Host/Origin names answered besides loopback's and the bound address's ("*": any)
  std::string access_log;                  ///< "" off, "-" stderr, else a file (appended): one JSON line per request
  std::string tls_cert, tls_key;           ///< HTTPS only (TLS 1.2+), PEM files; the key file private (chmod 600)
  std::string version;                     ///< attn's version, for /openapi.json
};

/// A running server. It changes no process-wide setting: the app blocks the signals it waits for
/// (apps/serve) before making one, so no thread of the server takes them.
class Server {
 public:
  /// Checks the options, binds host:port and reports "listening on http://HOST:PORT" through `log`,
  /// loads and warms every model (a bad one stops it with an error naming it), reports "ready",
  /// and serves from then on. Bad options throw std::invalid_argument; a model or the port that
  /// cannot be used, std::runtime_error.
  Server(const ServeOptions& options, std::function<void(const std::string&)> log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Re-reads every model's file while requests continue (as SIGHUP asks); a model whose file
  /// fails keeps serving the loaded one, and says why in the log.
  void reload_all();
  /// Stops accepting, finishes the requests in flight (queued ones run at once), returns when done.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// "NAME=PATH" or "PATH" as (name, path).
std::pair<std::string, std::string> parse_model_argument(const std::string& argument);

}  // namespace attn::server
