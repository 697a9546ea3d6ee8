// `attn serve`'s settings table (attn/server/options.h): each flag's help and default, the values
// given landing in their fields, and a value a flag cannot take refused naming the flag.
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/server/options.h"

using attn::server::serve_inputs;
using attn::server::serve_options;
using attn::server::ServeOptions;

namespace {

/// The inputs as the app hands them over (apps/common: inputs_of): each declared default, then the
/// flags given (a flag's value "true").
attn::data::Inputs serve_flags(const std::vector<std::pair<std::string, std::string>>& given) {
  attn::data::Inputs in;
  for (const auto& spec : serve_inputs())
    if (!spec.default_value.empty()) in.set(spec.name, spec.default_value, attn::data::Inputs::Origin::kDefault);
  for (const auto& [name, value] : given) in.set(name, value, attn::data::Inputs::Origin::kGiven);
  return in;
}

/// The message serve_options throws for `given` ("" when it takes them).
std::string refusal_of(const std::vector<std::pair<std::string, std::string>>& given) {
  try {
    serve_options(serve_flags(given));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every setting has one flag, a help line, and ServeOptions' default as its default", "[server][options]") {
  const auto specs = serve_inputs();
  std::set<std::string> names;
  for (const auto& spec : specs) {
    INFO("--" << spec.name);
    CHECK(names.insert(spec.name).second);
    CHECK_FALSE(spec.help.empty());
    CHECK_FALSE(spec.group.empty());
    if (spec.kind == attn::data::InputSpec::Kind::kFlag) CHECK(spec.default_value.empty());
  }
  for (const char* name : {"host",
                           "port",
                           "max-batch",
                           "max-delay-ms",
                           "max-queue",
                           "max-body-bytes",
                           "max-texts",
                           "http-threads",
                           "max-connections",
                           "connections-per-client",
                           "heavy-per-client",
                           "client-timeout-ms",
                           "keep-alive-ms",
                           "write-timeout-ms",
                           "request-timeout-ms",
                           "max-steps",
                           "max-request-cost",
                           "linger-ms",
                           "linger-bytes",
                           "api-key-file",
                           "public-docs",
                           "allow-unauthenticated",
                           "tls-cert",
                           "tls-key",
                           "access-log"})
    CHECK(names.count(name) == 1);
  for (const char* app_owned : {"model", "allowed-host", "threads", "api-key"}) CHECK(names.count(app_owned) == 0);  // (the app's)
  const ServeOptions defaults;
  for (const auto& spec : specs) {
    if (spec.name == "port") CHECK(spec.default_value == std::to_string(defaults.port));
    if (spec.name == "host") CHECK(spec.default_value == defaults.host);
    if (spec.name == "max-batch") CHECK(spec.default_value == std::to_string(defaults.max_batch));
    if (spec.name == "request-timeout-ms") CHECK(spec.default_value == std::to_string(defaults.request_timeout_ms));
    if (spec.name == "linger-bytes") CHECK(spec.default_value == std::to_string(defaults.linger_bytes));
  }
  // Nothing given: ServeOptions{}'s settings, whether or not the defaults were handed over.
  for (const attn::data::Inputs& in : {serve_flags({}), attn::data::Inputs{}}) {
    const ServeOptions o = serve_options(in);
    CHECK(o.host == defaults.host);
    CHECK(o.port == defaults.port);
    CHECK(o.max_batch == defaults.max_batch);
    CHECK(o.max_delay_ms == defaults.max_delay_ms);
    CHECK(o.max_queue == defaults.max_queue);
    CHECK(o.max_body_bytes == defaults.max_body_bytes);
    CHECK(o.client_timeout_ms == defaults.client_timeout_ms);
    CHECK(o.max_request_cost == defaults.max_request_cost);
    CHECK(o.linger_bytes == defaults.linger_bytes);
    CHECK_FALSE(o.public_docs);
    CHECK_FALSE(o.allow_unauthenticated);
    CHECK(o.api_key_file.empty());
    CHECK(o.access_log.empty());
  }
}

TEST_CASE("the values given land in their settings", "[server][options]") {
  const ServeOptions o = serve_options(serve_flags({{"host", "0.0.0.0"},
                                                    {"port", "0"},
                                                    {"max-batch", "8"},
                                                    {"max-delay-ms", "5"},
                                                    {"max-queue", "32"},
                                                    {"max-body-bytes", "4096"},
                                                    {"max-texts", "3"},
                                                    {"http-threads", "4"},
                                                    {"max-connections", "9"},
                                                    {"connections-per-client", "2"},
                                                    {"heavy-per-client", "1"},
                                                    {"client-timeout-ms", "250"},
                                                    {"keep-alive-ms", "100"},
                                                    {"write-timeout-ms", "300"},
                                                    {"request-timeout-ms", "0"},
                                                    {"max-steps", "16"},
                                                    {"max-request-cost", "0"},
                                                    {"linger-ms", "7"},
                                                    {"linger-bytes", "1099511627776"},  // past 32 bits: a size_t
                                                    {"api-key-file", "/etc/attn/keys"},
                                                    {"public-docs", "true"},
                                                    {"allow-unauthenticated", "true"},
                                                    {"tls-cert", "cert.pem"},
                                                    {"tls-key", "key.pem"},
                                                    {"access-log", "-"}}));
  CHECK(o.host == "0.0.0.0");
  CHECK(o.port == 0);
  CHECK(o.max_batch == 8);
  CHECK(o.max_delay_ms == 5);
  CHECK(o.max_queue == 32);
  CHECK(o.max_body_bytes == 4096);
  CHECK(o.max_texts == 3);
  CHECK(o.http_threads == 4);
  CHECK(o.max_connections == 9);
  CHECK(o.connections_per_client == 2);
  CHECK(o.heavy_per_client == 1);
  CHECK(o.client_timeout_ms == 250);
  CHECK(o.keep_alive_ms == 100);
  CHECK(o.write_timeout_ms == 300);
  CHECK(o.request_timeout_ms == 0);
  CHECK(o.max_steps == 16);
  CHECK(o.max_request_cost == 0);
  CHECK(o.linger_ms == 7);
  CHECK(o.linger_bytes == std::size_t{1} << 40);
  CHECK(o.api_key_file == "/etc/attn/keys");
  CHECK(o.public_docs);
  CHECK(o.allow_unauthenticated);
  CHECK(o.tls_cert == "cert.pem");
  CHECK(o.tls_key == "key.pem");
  CHECK(o.access_log == "-");
  CHECK(o.models.empty());  // the app's: --model
}

TEST_CASE("a value a flag cannot take is refused naming the flag and the value", "[server][options]") {
  CHECK_THAT(refusal_of({{"port", "-1"}}), Catch::StartsWith("--port ") && Catch::Contains("-1"));
  CHECK_THAT(refusal_of({{"max-delay-ms", "-5"}}), Catch::StartsWith("--max-delay-ms ") && Catch::Contains("out of range"));
  CHECK_THAT(refusal_of({{"http-threads", "4294967296"}}), Catch::StartsWith("--http-threads ") && Catch::Contains("4294967296"));
  CHECK_THAT(refusal_of({{"max-queue", "many"}}), Catch::StartsWith("--max-queue") && Catch::Contains("'many' is not an integer"));
  CHECK_THAT(refusal_of({{"max-batch", "8.5"}}), Catch::StartsWith("--max-batch") && Catch::Contains("'8.5'"));
  CHECK_THAT(refusal_of({{"max-body-bytes", ""}}), Catch::StartsWith("--max-body-bytes"));
  CHECK_THAT(refusal_of({{"max-texts", "99999999999999999999"}}), Catch::StartsWith("--max-texts"));  // past 64 bits
  CHECK_THAT(refusal_of({{"keep-alive-ms", "10"}, {"linger-ms", "-1"}}), Catch::StartsWith("--linger-ms "));
  CHECK(refusal_of({{"port", "65535"}, {"max-delay-ms", "0"}, {"request-timeout-ms", "0"}}).empty());
}
