#pragma once
/// The server's routes as one table: each row is matched, guarded, counted and described from the
/// same data, so GET /openapi.json (OpenAPI 3.0) cannot drift from what is served.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::server {

struct Exchange;  // routes.h: one request and its answer

struct Route {
  std::string method;     ///< "GET" or "POST"
  std::string path;       ///< as OpenAPI writes it, e.g. /v1/models/{name}/reload
  bool needs_key = true;  ///< when the server has API keys
  std::string summary;
  nlohmann::ordered_json request;   ///< the JSON body's schema (null: no body)
  nlohmann::ordered_json response;  ///< the 200 body's JSON schema (null: not JSON, see content_type)
  std::string content_type = "application/json";
  std::vector<int> errors;  ///< what the handler itself may answer besides 200 (with the JSON error body)
  /// Answers the request, now or later (Exchange::answer), or throws HttpError.
  std::function<void(const std::shared_ptr<Exchange>&)> handler;

  /// Whether `path` (not decoded) is this route's: each {parameter} matches one non-empty segment,
  /// returned %-decoded, in order; nullopt if it is not.
  std::optional<std::vector<std::string>> match(std::string_view path) const;
};

/// The JSON schemas the routes' bodies share (the rows of Api's table and /openapi.json).
struct Schemas {
  nlohmann::ordered_json string, integer, model_info, inputs, explain_request, results;
};
Schemas schemas();

/// The OpenAPI 3.0 document of `routes`: every route with its body, its 200 response and its errors
/// (the handler's own, and what the connection layer and the router answer for any route: 400,
/// 403, 404, 405, 408, 411, 413, 415, 429, 431, 503, and 401 where a key is needed).
nlohmann::ordered_json openapi(const std::vector<Route>& routes, const std::string& version, bool keys);

}  // namespace attn::server
