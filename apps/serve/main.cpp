// attn serve: trained models over HTTP, with dynamic batching and an explain page in the browser.
// The app owns the process's signals: SIGTERM and SIGINT stop the server, SIGHUP reloads its models.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/torch_threads.h"
#include "attn/server/server.h"
#include "attn/version.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn serve",
      "Serve trained models over HTTP: POST /v1/explain and /v1/predict ({\"model\": NAME, \"texts\": [...]} or\n"
      "{\"rows\": [[...]]}), GET /v1/models, /healthz, /readyz, /metrics (Prometheus), /openapi.json, and the explain\n"
      "page at /. POST /v1/models/NAME/reload or SIGHUP re-reads model files while requests continue.\n"
      "Slow, idle or hostile clients hold no thread (--client-timeout-ms, --keep-alive-ms, --write-timeout-ms,\n"
      "--max-connections); off loopback it needs API keys (--api-key-file or ATTN_API_KEY); --tls-cert/--tls-key\n"
      "serve HTTPS. Only Host names of this machine are answered (--allowed-host adds one).\n"
      "Requests from every connection are batched together (at most --max-batch inputs: what queued while the\n"
      "inference threads were busy, or waiting up to --max-delay-ms for more) on --threads inference threads. SIGTERM or Ctrl-C: stop accepting, finish what is in flight,\n"
      "exit 0.\n\n"
      "  attn serve --model toxic=runs/toxic --model dates=runs/dates/model.pt --port 8080\n"
      "  curl -s localhost:8080/v1/explain -d '{\"model\": \"toxic\", \"texts\": [\"ice cream sucks\"]}'");
  options.add_options("Input")("model", "A model to serve, NAME=PATH (a run directory or model.pt; repeatable)",
                               cxxopts::value<std::vector<std::string>>());
  options.add_options("Output")
      ("host", "Address to bind", cxxopts::value<std::string>()->default_value("127.0.0.1"))
      ("port", "Port (0: a free one, printed)", cxxopts::value<int>()->default_value("8080"));
  options.add_options("Security")
      ("api-key-file", "API keys, one per line (NAME:KEY or KEY; chmod 600): every route but /healthz, /readyz and the page "
                       "then needs 'Authorization: Bearer KEY' (or set ATTN_API_KEY)", cxxopts::value<std::string>())
      ("allow-unauthenticated", "Serve a --host other than loopback without API keys")
      ("allowed-host", "A Host (and Origin) name to answer besides loopback's and the bound address's ('*': any; repeatable)",
       cxxopts::value<std::vector<std::string>>())
      ("tls-cert", "Serve HTTPS (TLS 1.2 or later) with this PEM certificate chain", cxxopts::value<std::string>())
      ("tls-key", "... and this PEM private key (chmod 600)", cxxopts::value<std::string>())
      ("access-log", "One JSON line per request to this file ('-': stderr)", cxxopts::value<std::string>());
  options.add_options("Limits")
      ("max-batch", "Inputs per batch", cxxopts::value<std::int64_t>()->default_value("64"))
      ("max-delay-ms", "How long a request may wait for company (0: not at all)", cxxopts::value<int>()->default_value("0"))
      ("max-queue", "Inputs that may wait; more: 503", cxxopts::value<std::size_t>()->default_value("1024"))
      ("max-body-bytes", "Largest request body; larger: 413", cxxopts::value<std::size_t>()->default_value("1048576"))
      ("max-texts", "Inputs per request; more: 413", cxxopts::value<std::size_t>()->default_value("256"))
      ("http-threads", "The connection layer's threads (they never wait for a model)", cxxopts::value<int>()->default_value("2"))
      ("max-connections", "Open client connections; more: the longest idle (else the oldest unfinished) closes, else 503",
       cxxopts::value<std::size_t>()->default_value("512"))
      ("connections-per-client", "Open connections per client address; more: 429", cxxopts::value<std::size_t>()->default_value("128"))
      ("heavy-per-client", "Explanations with importance methods in flight per client address; more: 429",
       cxxopts::value<std::size_t>()->default_value("4"))
      ("client-timeout-ms", "A TLS handshake, and a request's headers and body, must arrive within it (else 408)",
       cxxopts::value<int>()->default_value("10000"))
      ("keep-alive-ms", "An idle connection closes after it", cxxopts::value<int>()->default_value("5000"))
      ("write-timeout-ms", "A response must be written within it, else the connection closes", cxxopts::value<int>()->default_value("10000"))
      ("request-timeout-ms", "A request still queued after it gets 503 and is dropped (0: never)", cxxopts::value<int>()->default_value("30000"))
      ("max-steps", "Integrated gradients' steps a /v1/explain request may ask for (its cost grows with them)",
       cxxopts::value<int>()->default_value("64"));
  // clang-format on
  add_threads_option(options);  // inference threads: each runs its own batches on one LibTorch thread
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  set_torch_threads(1);                  // small batches: one core each beats all cores on one (bench/results/serve.json)
  keep_freed_memory(Heaps::kPerThread);  // batch after batch of similar tensors: keep the pages
  server::ServeOptions request;
  request.models = given<std::vector<std::string>>(r, "model").value_or(std::vector<std::string>{});
  request.host = r["host"].as<std::string>();
  request.port = r["port"].as<int>();
  request.max_batch = r["max-batch"].as<std::int64_t>();
  request.max_delay_ms = r["max-delay-ms"].as<int>();
  request.max_queue = r["max-queue"].as<std::size_t>();
  request.max_body_bytes = r["max-body-bytes"].as<std::size_t>();
  request.max_texts = r["max-texts"].as<std::size_t>();
  request.http_threads = r["http-threads"].as<int>();
  request.max_connections = r["max-connections"].as<std::size_t>();
  request.connections_per_client = r["connections-per-client"].as<std::size_t>();
  request.heavy_per_client = r["heavy-per-client"].as<std::size_t>();
  request.client_timeout_ms = r["client-timeout-ms"].as<int>();
  request.keep_alive_ms = r["keep-alive-ms"].as<int>();
  request.write_timeout_ms = r["write-timeout-ms"].as<int>();
  request.request_timeout_ms = r["request-timeout-ms"].as<int>();
  request.workers = threads_option(r);
  request.max_steps = r["max-steps"].as<int>();
  request.api_key_file = given<std::string>(r, "api-key-file").value_or("");
  if (const char* key = std::getenv("ATTN_API_KEY")) request.api_key = key;
  request.allow_unauthenticated = r.count("allow-unauthenticated") > 0;
  request.allowed_hosts = given<std::vector<std::string>>(r, "allowed-host").value_or(std::vector<std::string>{});
  request.access_log = given<std::string>(r, "access-log").value_or("");
  request.tls_cert = given<std::string>(r, "tls-cert").value_or("");
  request.tls_key = given<std::string>(r, "tls-key").value_or("");
  request.version = ATTN_VERSION;
  const auto log = [](const std::string& line) { std::printf("attn serve: %s\n", line.c_str()), std::fflush(stdout); };
  // SIGTERM, SIGINT and SIGHUP are taken by sigwaitinfo below, not by a handler: blocked before the
  // server starts its threads, so every thread inherits the mask. SIGPIPE too: a client gone
  // mid-response is an error from send, not the end of the process.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  sigset_t blocked = signals;
  sigaddset(&blocked, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  server::Server server(request, log);
  for (;;) {
    const int sig = sigwaitinfo(&signals, nullptr);
    if (sig == SIGHUP) {
      log("SIGHUP: reloading the models");
      server.reload_all();
    } else if (sig == SIGTERM || sig == SIGINT) {
      log(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "): finishing the requests in flight");
      break;
    }
  }
  server.stop();
  log("stopped");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn serve", [&] { return attn::apps::run(argc, argv); });
}
