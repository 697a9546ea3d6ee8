// attn serve: trained models over HTTP, with dynamic batching and an explain page in the browser.
#include <cstdio>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/torch_threads.h"
#include "attn/server/server.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn serve",
      "Serve trained models over HTTP: POST /v1/explain and /v1/predict ({\"model\": NAME, \"texts\": [...]} or\n"
      "{\"rows\": [[...]]}), GET /v1/models, /healthz, /readyz, /metrics (Prometheus), and the explain page at /.\n"
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
  options.add_options("Limits")
      ("max-batch", "Inputs per batch", cxxopts::value<std::int64_t>()->default_value("64"))
      ("max-delay-ms", "How long a request may wait for company (0: not at all)", cxxopts::value<int>()->default_value("0"))
      ("max-queue", "Inputs that may wait; more: 503", cxxopts::value<std::size_t>()->default_value("1024"))
      ("max-body-bytes", "Largest request body; larger: 413", cxxopts::value<std::size_t>()->default_value("1048576"))
      ("max-texts", "Inputs per request; more: 413", cxxopts::value<std::size_t>()->default_value("256"))
      ("connections", "HTTP threads (each open keep-alive connection holds one)", cxxopts::value<int>()->default_value("16"))
      ("max-steps", "Integrated gradients' steps a /v1/explain request may ask for (its cost grows with them)",
       cxxopts::value<int>()->default_value("64"));
  // clang-format on
  add_threads_option(options);  // inference threads: each runs its own batches on one LibTorch thread
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  set_torch_threads(1);                  // small batches: one core each beats all cores on one (bench/results/serve.json)
  keep_freed_memory(Heaps::kPerThread);  // batch after batch of similar tensors: keep the pages
  const server::ServeOptions request{given<std::vector<std::string>>(r, "model").value_or(std::vector<std::string>{}),
                                     r["host"].as<std::string>(),
                                     r["port"].as<int>(),
                                     r["max-batch"].as<std::int64_t>(),
                                     r["max-delay-ms"].as<int>(),
                                     r["max-queue"].as<std::size_t>(),
                                     r["max-body-bytes"].as<std::size_t>(),
                                     r["max-texts"].as<std::size_t>(),
                                     r["connections"].as<int>(),
                                     threads_option(r),
                                     r["max-steps"].as<int>()};
  server::serve(request, [](const std::string& line) { std::printf("attn serve: %s\n", line.c_str()), std::fflush(stdout); });
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn serve", [&] { return attn::apps::run(argc, argv); });
}
