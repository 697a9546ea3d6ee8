#pragma once
/// The server's routes as one table: each row is matched, guarded, counted and described from the
/// same data, so GET /openapi.json (OpenAPI 3.0) cannot drift from what is served.
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace attn::server {

struct Route {
  std::string method;             ///< "GET" or "POST"
  std::string path;               ///< as OpenAPI writes it, e.g. /v1/models/{name}/reload
  bool needs_key = true;          ///< when the server has API keys
  std::string summary;
  nlohmann::ordered_json request;   ///< the JSON body's schema (null: no body)
  nlohmann::ordered_json response;  ///< the 200 body's JSON schema (null: not JSON, see content_type)
  std::string content_type = "application/json";
  std::vector<int> errors;  ///< what the handler itself may answer besides 200 (with the JSON error body)
  httplib::Server::Handler handler;

  /// cpp-httplib's pattern: each {parameter} matches one path segment.
  std::string pattern() const;
};

/// The OpenAPI 3.0 document of `routes`: every route with its body, its 200 response and its errors
/// (the handler's own, and what the front end and the router answer for any route: 404, 405, 408,
/// 413, 429, 431, 503, and 401 where a key is needed).
nlohmann::ordered_json openapi(const std::vector<Route>& routes, const std::string& version, bool keys);

}  // namespace attn::server
