// attn serve: trained models over HTTP, with dynamic batching and an explain page in the browser.
// The app owns the process's signals: SIGTERM and SIGINT stop the server, SIGHUP reloads its models.
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/signals.h"
#include "../common/torch_threads.h"
#include "attn/server/options.h"
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
  options.add_options("Security")(
      "allowed-host", "A Host (and Origin) name to answer besides loopback's and the bound address's ('*': any; repeatable)",
      cxxopts::value<std::vector<std::string>>());
  const auto settings = server::serve_inputs();
  add_inputs(options, settings);
  // clang-format on
  add_threads_option(options);  // inference threads: each runs its own batches on one LibTorch thread
  const cxxopts::ParseResult r = parse_options(options, argc, argv);
  set_torch_threads(1);                  // small batches: one core each beats all cores on one (bench/serve/results/serve.json)
  keep_freed_memory(Heaps::kPerThread);  // batch after batch of similar tensors: keep the pages
  server::ServeOptions request = server::serve_options(inputs_of(r, settings));
  request.models = given<std::vector<std::string>>(r, "model").value_or(std::vector<std::string>{});
  request.allowed_hosts = given<std::vector<std::string>>(r, "allowed-host").value_or(std::vector<std::string>{});
  request.workers = threads_option(r);
  if (const char* key = std::getenv("ATTN_API_KEY")) request.api_key = key;
  request.version = ATTN_VERSION;
  const auto log = [](const std::string& line) { std::printf("attn serve: %s\n", line.c_str()), std::fflush(stdout); };
  const StopSignals signals;  // before the server starts a thread
  server::Server server(request, log);
  const int sig = signals.wait([&] {
    log("SIGHUP: reloading the models");
    server.reload_all();
  });
  log(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + "): finishing the requests in flight");
  server.stop();
  log("stopped");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn serve", [&] { return attn::apps::run(argc, argv); });
}
