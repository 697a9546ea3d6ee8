#pragma once
/// `attn serve`: trained models over HTTP (cpp-httplib), with dynamic batching (batcher.h), metrics
/// for Prometheus (metrics.h) and an explain page for the browser (page/explain.html). The server
/// calls the tasks' predict and explain (lib/include/attn/tasks/task.h) and knows no task itself.
///
///   GET  /healthz      200 while the process serves
///   GET  /readyz       200 once every model is loaded and warmed up, 503 before
///   GET  /v1/models    per model: name, registry model, task, its inputs, labels or features, config, examples,
///                      the importance methods it gives and max_steps
///   POST /v1/explain   {"model": NAME, "texts": [...]} or {"rows": [[...], ...]} (+ "self_attention": true,
///                      "methods": ["integrated-gradients", ...], "steps": N <= --max-steps)
///                      -> {"model": NAME, "results": [what `attn explain --json [--method ...]` prints, per input]}
///   POST /v1/predict   the same body -> {"model": NAME, "results": [outputs only, per input]}
///   POST /v1/models/NAME/reload  re-read the model's file and swap it in while requests continue (also SIGHUP)
///   GET  /metrics      Prometheus' text format
///   GET  /openapi.json this API as OpenAPI 3.0 (made from the route table, src/api.h)
///   GET  /             the explain page (?model=NAME&text=...&text2=... opens explained)
/// With API keys, a request without a valid `Authorization: Bearer KEY` gets 401 (WWW-Authenticate).
/// Errors: {"error": {"status": N, "message": "..."}} with 400 (malformed JSON, missing or mistyped
/// fields, invalid UTF-8, bad inputs), 404 (unknown path or model), 405 (wrong method), 413 (body
/// too large, too many inputs), 503 (queue full, with Retry-After; models still loading).
/// Before routing, the front end (src/front.h) answers 408 (request not whole within
/// --client-timeout-ms), 429 (--connections-per-client), 431 (headers too large), 413, and 503
/// (--max-connections open, none idle) itself, and closes the connection.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
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
  std::size_t max_texts = 256;  ///< inputs per request; more: 413
  int connections = 16;         ///< HTTP threads (a request holds one only once all of it arrived: front.h)
  std::size_t max_connections = 512;         ///< open client connections; more: the longest idle closes, else 503
  std::size_t connections_per_client = 128;  ///< per client address; more: 429
  int client_timeout_ms = 10000;             ///< a request's headers and body must arrive within it; else 408
  int keep_alive_ms = 5000;                  ///< an idle connection closes after it
  int request_timeout_ms = 30000;            ///< a request still queued after it: 503, its work dropped (0: never)
  int workers = 1;              ///< inference threads (each batch runs on one LibTorch thread)
  int max_steps = 64;           ///< integrated gradients' steps a request may ask for
  std::string api_key_file;     ///< keys, one per line (auth.h); every route but /healthz, /readyz and / needs one
  std::string api_key;          ///< or one key (the app passes ATTN_API_KEY)
  bool allow_unauthenticated = false;  ///< needed to serve a non-loopback --host without keys
  std::string access_log;              ///< "" off, "-" stderr, else a file (appended): one JSON line per request
  std::string tls_cert, tls_key;       ///< HTTPS only (TLS 1.2+), PEM files; the key file private (chmod 600)
  std::string version;                 ///< attn's version, for /openapi.json
};

/// Binds host:port and reports "listening on http://HOST:PORT" through `log`, loads and warms every
/// model (a bad one stops the server with an error naming it), reports "ready", then serves until
/// SIGTERM or SIGINT: stops accepting, finishes what is in flight, and returns. Bad options throw
/// std::invalid_argument; a model or the port that cannot be used, std::runtime_error.
void serve(const ServeOptions& options, const std::function<void(const std::string&)>& log);

/// "NAME=PATH" or "PATH" as (name, path).
std::pair<std::string, std::string> parse_model_argument(const std::string& argument);

}  // namespace attn::server
