// The routes' paths and their OpenAPI 3.0 description (server/src/api.h): which paths a route takes
// and what it decodes from them, every route's body, answer and errors as a client generator reads them.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "api.h"

using attn::server::Route;

namespace {

Route api_route(const std::string& method, const std::string& path, bool needs_key = true) {
  Route r;
  r.method = method;
  r.path = path;
  r.needs_key = needs_key;
  r.summary = method + " " + path;
  return r;
}

/// A server's routes in small: a probe, a JSON POST with its own errors, a path with a parameter, a page.
std::vector<Route> api_routes() {
  const attn::server::Schemas k = attn::server::schemas();
  std::vector<Route> routes = {api_route("GET", "/healthz", false), api_route("POST", "/v1/explain"),
                               api_route("POST", "/v1/models/{name}/reload"), api_route("GET", "/")};
  routes[0].response = {{"type", "object"}};
  routes[1].request = k.explain_request;
  routes[1].response = k.results;
  routes[1].errors = {400, 429};
  routes[2].response = {{"type", "object"}};
  routes[2].errors = {422};
  routes[3].content_type = "text/html; charset=utf-8";
  return routes;
}

std::set<std::string> statuses_of(const nlohmann::ordered_json& operation) {
  std::set<std::string> out;
  for (const auto& [status, _] : operation.at("responses").items()) out.insert(status);
  return out;
}

}  // namespace

TEST_CASE("a route takes its own path only, its parameters %-decoded", "[server][api]") {
  const Route probe = api_route("GET", "/healthz");
  CHECK(probe.match("/healthz") == std::optional<std::vector<std::string>>(std::vector<std::string>{}));
  for (const char* other : {"/healthz/", "/healthz/x", "/HEALTHZ", "/%68ealthz", "/healthz?x", "healthz", "/", ""}) {
    INFO(other);
    CHECK_FALSE(probe.match(other));
  }
  const Route reload = api_route("POST", "/v1/models/{name}/reload");
  CHECK(reload.match("/v1/models/toxic/reload") == std::optional<std::vector<std::string>>({"toxic"}));
  CHECK(reload.match("/v1/models/my%20model%2Fv2/reload") == std::optional<std::vector<std::string>>({"my model/v2"}));
  CHECK(reload.match("/v1/models/100%25/reload") == std::optional<std::vector<std::string>>({"100%"}));
  CHECK(reload.match("/v1/models/a%zz%4/reload") == std::optional<std::vector<std::string>>({"a%zz%4"}));  // not escapes: kept
  for (const char* other : {"/v1/models//reload", "/v1/models/toxic", "/v1/models/toxic/reload/", "/v1/models/a/b/reload",
                            "/v1/models/toxic/reloads", "/v1/models"}) {
    INFO(other);
    CHECK_FALSE(reload.match(other));
  }
  const Route two = api_route("GET", "/v1/{a}/x/{b}");
  CHECK(two.match("/v1/1/x/2") == std::optional<std::vector<std::string>>({"1", "2"}));
  CHECK_FALSE(two.match("/v1/1/y/2"));
}

TEST_CASE("the OpenAPI document: each route's body, its answer and every error it may get", "[server][api]") {
  const auto doc = attn::server::openapi(api_routes(), "1.2.3", false);
  CHECK(doc.at("openapi") == "3.0.3");
  CHECK(doc.at("info").at("version") == "1.2.3");
  const auto& paths = doc.at("paths");
  CHECK(paths.size() == 4);
  const auto& explain = paths.at("/v1/explain").at("post");
  CHECK(explain.at("requestBody").at("required") == true);
  CHECK(explain.at("requestBody").at("content").at("application/json").at("schema") == attn::server::schemas().explain_request);
  CHECK(explain.at("responses").at("200").at("content").at("application/json").at("schema") == attn::server::schemas().results);
  // The route's own errors, what any request may get, and a body's own refusals (411, 413, 415).
  CHECK(statuses_of(explain) == std::set<std::string>{"200", "400", "403", "404", "405", "408", "411", "413", "415", "429", "431", "503"});
  for (const auto& [status, response] : explain.at("responses").items()) {
    INFO(status);
    CHECK_FALSE(response.at("description").get<std::string>().empty());
    if (status != "200") CHECK(response.at("content").at("application/json").at("schema").at("$ref") == "#/components/schemas/Error");
  }
  const auto& error = doc.at("components").at("schemas").at("Error");
  CHECK(error.at("required") == nlohmann::ordered_json::array({"error"}));
  CHECK(error.at("properties").at("error").at("required") == nlohmann::ordered_json::array({"status", "message"}));
  // A GET has no body, so no body refusals; a page answers text, not JSON.
  const auto& probe = paths.at("/healthz").at("get");
  CHECK_FALSE(probe.contains("requestBody"));
  CHECK(statuses_of(probe).count("411") == 0);
  CHECK(statuses_of(probe).count("413") == 0);
  CHECK(paths.at("/").at("get").at("responses").at("200").at("content").contains("text/html; charset=utf-8"));
  // A path parameter is declared, required; 422 is the reload's own.
  const auto& reload = paths.at("/v1/models/{name}/reload").at("post");
  CHECK(reload.at("parameters") == nlohmann::ordered_json::parse(R"([{"name": "name", "in": "path", "required": true,
                                                                     "schema": {"type": "string"}}])"));
  CHECK(statuses_of(reload).count("422") == 1);
  CHECK(statuses_of(explain).count("422") == 0);
  // Without keys: no 401, no security scheme.
  CHECK(statuses_of(explain).count("401") == 0);
  CHECK_FALSE(doc.at("components").contains("securitySchemes"));
  CHECK_FALSE(explain.contains("security"));
  // Operation ids are unique and usable as identifiers.
  std::set<std::string> ids;
  for (const auto& [path, methods] : paths.items())
    for (const auto& [method, operation] : methods.items()) {
      const std::string id = operation.at("operationId");
      CHECK(ids.insert(id).second);
      CHECK(id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos);
    }
  CHECK(ids.count("post_v1_models_name_reload") == 1);
}

TEST_CASE("with API keys, the document says which routes need one", "[server][api]") {
  const auto doc = attn::server::openapi(api_routes(), "1.2.3", true);
  CHECK(doc.at("components").at("securitySchemes").at("apiKey") == nlohmann::ordered_json{{"type", "http"}, {"scheme", "bearer"}});
  const auto& explain = doc.at("paths").at("/v1/explain").at("post");
  CHECK(explain.at("security") == nlohmann::ordered_json::parse(R"([{"apiKey": []}])"));
  CHECK(statuses_of(explain).count("401") == 1);
  const auto& probe = doc.at("paths").at("/healthz").at("get");  // a public probe: no key, so no 401
  CHECK(probe.at("security") == nlohmann::ordered_json::array());
  CHECK(statuses_of(probe).count("401") == 0);
}

TEST_CASE("the request schemas: what /v1/explain and /v1/predict take, what /v1/models gives", "[server][api]") {
  const attn::server::Schemas k = attn::server::schemas();
  for (const char* field : {"model", "texts", "rows"}) {
    CHECK(k.inputs.at("properties").contains(field));
    CHECK(k.explain_request.at("properties").contains(field));
  }
  for (const char* field : {"methods", "steps", "self_attention", "rationales"}) {  // explain's own
    CHECK(k.explain_request.at("properties").contains(field));
    CHECK_FALSE(k.inputs.at("properties").contains(field));
  }
  CHECK(k.inputs.at("properties").at("texts").at("minItems") == 1);
  CHECK(k.results.at("required") == nlohmann::ordered_json::array({"model", "results"}));
  const auto& info = k.model_info;
  for (const auto& field : info.at("required")) CHECK(info.at("properties").contains(field.get<std::string>()));
  CHECK(info.at("properties").at("sha256").at("pattern") == "^[0-9a-f]{64}$");
  CHECK(info.at("properties").at("input").at("enum") == nlohmann::ordered_json::array({"texts", "rows"}));
}
