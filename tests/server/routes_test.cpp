// The routes and what every request meets before one runs (server/src/routes.h), as a table and
// without a socket: a keyed server answers 401 on every path but the probes (no route can be
// enumerated), then 400 for dot segments, 404, 405 with Allow; Host and Origin are checked first.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "routes.h"

using attn::server::Api;
using attn::server::ApiKeys;
using attn::server::Head;
using attn::server::ModelStore;
using attn::server::Response;
using attn::server::ServeOptions;

namespace {

const std::string kKey = "route-test-key-0123456789";

struct Row {
  std::string method, path;
  bool key;
  int status;  ///< 0: accepted (the route runs)
};

Head head_of(const std::string& method, const std::string& path, bool key) {
  Head h;
  h.method = method;
  h.target = path;
  h.path = path;
  h.fields = {{"Host", "localhost:8080"}};
  if (key) h.fields.emplace_back("Authorization", "Bearer " + kKey);
  return h;
}

struct Served {
  explicit Served(bool public_docs = false)
      : store({"toxic=/nonexistent/model.pt"}, 1, 8, 8),
        options([&] {
          ServeOptions o;
          o.public_docs = public_docs;
          return o;
        }()),
        api(
            options, ApiKeys::from_value(kKey, "test"), store, [] { return std::size_t{0}; }, [](const std::string&) {}) {}
  /// accept(), then handle() when accepted; the answer given (handle answers at once on these routes).
  Response run(Head h) {
    if (auto refusal = api.accept(h)) return *refusal;
    std::optional<Response> answer;
    api.handle({std::move(h), ""}, [&](Response r) { answer = std::move(r); });
    REQUIRE(answer);
    return *answer;
  }
  ModelStore store;
  ServeOptions options;
  Api api;
};

}  // namespace

TEST_CASE("a keyed server checks the key before the route", "[server][routes]") {
  Served served;
  const std::vector<Row> table = {
      {"GET", "/healthz", false, 0},
      {"GET", "/readyz", false, 0},  // the probes are public
      {"GET", "/metrics", false, 401},
      {"GET", "/no/such/path", false, 401},
      {"GET", "/v1/models/../metrics", false, 401},
      {"GET", "/%68ealthz", false, 401},  // a probe only as spelt
      {"DELETE", "/v1/explain", false, 401},
      {"GET", "/openapi.json", false, 401},
      {"GET", "/", false, 401},
      {"POST", "/v1/models/toxic/reload", false, 401},
      {"GET", "/no/such/path", true, 404},
      {"GET", "/v1/models/../metrics", true, 400},
      {"GET", "/v1/%2e%2E/metrics", true, 400},
      {"DELETE", "/v1/explain", true, 405},
      {"GET", "/v1/predict", true, 405},
      {"POST", "/healthz", true, 405},
      {"GET", "/v1/models/", true, 404},
      {"GET", "/metrics", true, 0},
      {"HEAD", "/metrics", true, 0},
      {"POST", "/v1/explain", true, 0},
      {"POST", "/v1/predict", true, 0},
      {"POST", "/v1/models/toxic/reload", true, 0},
      {"GET", "/openapi.json", true, 0},
      {"GET", "/", true, 0},
  };
  for (const Row& row : table) {
    INFO(row.method << " " << row.path << (row.key ? " with the key" : " without a key"));
    Head h = head_of(row.method, row.path, row.key);
    const auto refusal = served.api.accept(h);
    CHECK((refusal ? refusal->status : 0) == row.status);
  }
}

TEST_CASE("a refusal says what to do: the scheme to authenticate with, the methods allowed", "[server][routes]") {
  Served served;
  Head h = head_of("GET", "/metrics", false);
  const auto missing = served.api.accept(h);
  REQUIRE(missing);
  CHECK(missing->body.find("Authorization: Bearer") != std::string::npos);
  CHECK(std::find(missing->headers.begin(), missing->headers.end(),
                  std::pair<std::string, std::string>("WWW-Authenticate", "Bearer realm=\"attn\"")) != missing->headers.end());
  h.fields.emplace_back("Authorization", "Bearer not-the-key-at-all-000");
  const auto wrong = served.api.accept(h);
  REQUIRE(wrong);
  CHECK(wrong->status == 401);
  CHECK(wrong->body.find("not valid") != std::string::npos);
  Head post = head_of("DELETE", "/v1/models/toxic/reload", true);
  const auto method = served.api.accept(post);
  REQUIRE(method);
  CHECK(method->status == 405);
  CHECK(std::find(method->headers.begin(), method->headers.end(), std::pair<std::string, std::string>("Allow", "POST")) !=
        method->headers.end());
}

TEST_CASE("only this server's names may call it: Host and Origin", "[server][routes]") {
  Served served;
  Head rebinding = head_of("GET", "/healthz", true);
  rebinding.fields[0].second = "attacker.example:8080";
  const auto host = served.api.accept(rebinding);
  REQUIRE(host);
  CHECK(host->status == 403);
  Head cross = head_of("GET", "/healthz", true);
  cross.fields.emplace_back("Origin", "http://attacker.example");
  CHECK(served.api.accept(cross)->status == 403);
  Head local = head_of("GET", "/healthz", true);
  local.fields.emplace_back("Origin", "http://127.0.0.1:8080");
  CHECK_FALSE(served.api.accept(local).has_value());
}

TEST_CASE("--public-docs opens the page and the API description, nothing else", "[server][routes]") {
  Served served(true);
  for (const std::string path : {"/", "/openapi.json"}) {
    Head h = head_of("GET", path, false);
    CHECK_FALSE(served.api.accept(h).has_value());
  }
  Head metrics = head_of("GET", "/metrics", false);
  CHECK(served.api.accept(metrics)->status == 401);
}

TEST_CASE("the routes answer from the table: probes, readiness, the description of every route", "[server][routes]") {
  Served served;
  const Response alive = served.run(head_of("GET", "/healthz", false));
  CHECK(alive.status == 200);
  CHECK(nlohmann::json::parse(alive.body) == nlohmann::json{{"status", "alive"}});
  const Response loading = served.run(head_of("GET", "/readyz", false));  // no model loaded yet
  CHECK(loading.status == 503);
  CHECK(std::find(loading.headers.begin(), loading.headers.end(), std::pair<std::string, std::string>("Retry-After", "1")) !=
        loading.headers.end());
  CHECK(served.run(head_of("GET", "/v1/models", true)).status == 503);
  const auto doc = nlohmann::json::parse(served.run(head_of("GET", "/openapi.json", true)).body);
  for (const char* path :
       {"/healthz", "/readyz", "/v1/models", "/v1/explain", "/v1/predict", "/v1/models/{name}/reload", "/metrics", "/openapi.json", "/"})
    CHECK(doc.at("paths").contains(path));
  CHECK(doc.at("paths").at("/v1/explain").contains("post"));
  CHECK(doc.at("paths").at("/v1/explain").at("post").at("responses").contains("401"));
  const Response page = served.run(head_of("GET", "/", true));
  CHECK(page.content_type == "text/html; charset=utf-8");
  CHECK(page.body.find("<html") != std::string::npos);
  CHECK(served.run(head_of("GET", "/metrics", true)).body.find("# TYPE") != std::string::npos);
}
