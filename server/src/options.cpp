// `attn serve`'s settings as command-line inputs (see options.h): the one table.
#include "attn/server/options.h"

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace attn::server {
namespace {

struct Row {
  data::InputSpec spec;
  std::function<void(ServeOptions&, const data::Inputs&)> set;
};

/// A whole-number setting: --FLAG into `field`, its default ServeOptions{}'s.
template <class T>
Row number(const char* flag, T ServeOptions::*field, const char* help, const char* group = "Limits") {
  return {{flag, help, std::to_string(ServeOptions{}.*field), data::InputSpec::Kind::kValue, group},
          [flag, field](ServeOptions& o, const data::Inputs& in) {
            const std::int64_t v = in.integer(flag);
            if (v < 0 || static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
              throw std::invalid_argument(std::string("--") + flag + " is out of range, got " + std::to_string(v));
            o.*field = static_cast<T>(v);
          }};
}

Row text(const char* flag, std::string ServeOptions::*field, const char* help, const char* group) {
  const std::string fallback = ServeOptions{}.*field;
  return {{flag, help, fallback, data::InputSpec::Kind::kValue, group}, [flag, field](ServeOptions& o, const data::Inputs& in) {
            if (const auto v = in.get(flag)) o.*field = *v;
          }};
}

const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      text("host", &ServeOptions::host, "Address to bind", "Output"),
      number("port", &ServeOptions::port, "Port (0: a free one, printed)", "Output"),
      text("api-key-file", &ServeOptions::api_key_file,
           "API keys, one per line (NAME:KEY or KEY; chmod 600): every path but /healthz and /readyz then needs "
           "'Authorization: Bearer KEY' (or set ATTN_API_KEY), checked before the path is looked at",
           "Security"),
      {{"public-docs", "With API keys, still serve the page and /openapi.json without one", "", data::InputSpec::Kind::kFlag, "Security"},
       [](ServeOptions& o, const data::Inputs& in) { o.public_docs = in.flag("public-docs"); }},
      {{"allow-unauthenticated", "Serve a --host other than loopback without API keys", "", data::InputSpec::Kind::kFlag, "Security"},
       [](ServeOptions& o, const data::Inputs& in) { o.allow_unauthenticated = in.flag("allow-unauthenticated"); }},
      text("tls-cert", &ServeOptions::tls_cert, "Serve HTTPS (TLS 1.2 or later) with this PEM certificate chain", "Security"),
      text("tls-key", &ServeOptions::tls_key, "... and this PEM private key (chmod 600)", "Security"),
      text("access-log", &ServeOptions::access_log, "One JSON line per request to this file ('-': stderr)", "Security"),
      number("max-batch", &ServeOptions::max_batch, "Inputs per batch"),
      number("max-delay-ms", &ServeOptions::max_delay_ms, "How long a request may wait for company (0: not at all)"),
      number("max-queue", &ServeOptions::max_queue, "Inputs that may wait; more: 503"),
      number("max-body-bytes", &ServeOptions::max_body_bytes, "Largest request body, whatever its framing; larger: 413"),
      number("max-texts", &ServeOptions::max_texts, "Inputs per request; more: 413"),
      number("http-threads", &ServeOptions::http_threads, "The connection layer's threads (they never wait for a model)"),
      number("max-connections", &ServeOptions::max_connections,
             "Open client connections; more: the longest idle (else the oldest unfinished) closes, else 503"),
      number("connections-per-client", &ServeOptions::connections_per_client, "Open connections per client address; more: 429"),
      number("heavy-per-client", &ServeOptions::heavy_per_client,
             "Explanations with importance methods in flight per client address; more: 429"),
      number("client-timeout-ms", &ServeOptions::client_timeout_ms,
             "A TLS handshake, and a request's headers and body, must arrive within it (else 408)"),
      number("keep-alive-ms", &ServeOptions::keep_alive_ms, "An idle connection closes after it"),
      number("write-timeout-ms", &ServeOptions::write_timeout_ms, "A response must be written within it, else the connection closes"),
      number("request-timeout-ms", &ServeOptions::request_timeout_ms, "A request still queued after it gets 503 and is dropped (0: never)"),
      number("max-steps", &ServeOptions::max_steps,
             "Integrated gradients' steps a /v1/explain request may ask for (its cost grows with them)"),
      number("max-request-cost", &ServeOptions::max_request_cost,
             "Largest cost of one request, in words (or features, characters) read by forward passes: each input's words "
             "times its passes (a backward pass counts 2), summed; more: 413 before any work (0: no cap)"),
      number("linger-ms", &ServeOptions::linger_ms,
             "After refusing a body still arriving (413, 411, 415, 431), read and drop it for at most this long before closing"),
      number("linger-bytes", &ServeOptions::linger_bytes, "... or at most this many bytes"),
  };
  return rows;
}

}  // namespace

std::vector<data::InputSpec> serve_inputs() {
  std::vector<data::InputSpec> specs;
  for (const Row& r : table()) specs.push_back(r.spec);
  return specs;
}

ServeOptions serve_options(const data::Inputs& inputs) {
  ServeOptions o;
  for (const Row& r : table())
    if (inputs.get(r.spec.name) || r.spec.kind == data::InputSpec::Kind::kFlag) r.set(o, inputs);
  return o;
}

}  // namespace attn::server
