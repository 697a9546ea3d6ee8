#include "api.h"

#include <cctype>
#include <map>
#include <regex>

namespace attn::server {

using json = nlohmann::ordered_json;

namespace {

int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> Route::match(std::string_view target) const {
  std::vector<std::string> parameters;
  std::string_view pattern = path;
  for (;;) {
    const std::size_t a = pattern.find('/'), b = target.find('/');
    const std::string_view p = pattern.substr(0, a), t = target.substr(0, b);
    if (p.size() > 1 && p.front() == '{' && p.back() == '}') {
      if (t.empty()) return std::nullopt;
      parameters.push_back(percent_decoded(t));
    } else if (p != t) {
      return std::nullopt;
    }
    if (a == std::string_view::npos || b == std::string_view::npos) {
      if (a != b) return std::nullopt;
      return parameters;
    }
    pattern.remove_prefix(a + 1);
    target.remove_prefix(b + 1);
  }
}

namespace {

const char* describe(int status) {
  switch (status) {
    case 400:
      return "Bad request: malformed JSON, a missing or mistyped field, invalid UTF-8, a number out of range, inputs the model cannot "
             "read; or framing that could be read two ways (then the connection closes)";
    case 401:
      return "No valid API key (Authorization: Bearer KEY); WWW-Authenticate says so";
    case 403:
      return "The Host (or Origin) is not one this server answers to (--allowed-host)";
    case 404:
      return "No such path, or no such model";
    case 405:
      return "The path takes another method (Allow names it)";
    case 408:
      return "The request did not arrive whole within --client-timeout-ms";
    case 411:
      return "A POST without Content-Length or Transfer-Encoding: chunked";
    case 413:
      return "The body is over --max-body-bytes, or more inputs than --max-texts";
    case 415:
      return "A body in a Content-Encoding other than identity (bodies are never inflated)";
    case 422:
      return "The model file could not be loaded; the loaded model still serves";
    case 429:
      return "Too many connections from this address (--connections-per-client), or too many importance-method explanations in flight "
             "(--heavy-per-client); Retry-After";
    case 431:
      return "The request line and headers (or chunked trailers) are too large";
    case 500:
      return "An unexpected error";
    default:
      return "Busy (queue full, --max-connections open, past --request-timeout-ms) or models still loading; Retry-After";
  }
}

}  // namespace

json openapi(const std::vector<Route>& routes, const std::string& version, bool keys) {
  json doc = {{"openapi", "3.0.3"},
              {"info",
               {{"title", "attn serve"},
                {"version", version},
                {"description", "Trained attention models over HTTP: predictions, and explanations word by word."}}},
              {"paths", json::object()}};
  json error = {{"type", "object"},
                {"required", {"error"}},
                {"properties",
                 {{"error",
                   {{"type", "object"},
                    {"required", {"status", "message"}},
                    {"properties", {{"status", {{"type", "integer"}}}, {"message", {{"type", "string"}}}}}}}}}};
  doc["components"] = {{"schemas", {{"Error", error}}}};
  if (keys) doc["components"]["securitySchemes"] = {{"apiKey", {{"type", "http"}, {"scheme", "bearer"}}}};
  for (const Route& r : routes) {
    json op = {{"summary", r.summary}, {"operationId", r.method + r.path}, {"responses", json::object()}};
    std::string lower = r.method;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    op["operationId"] = lower + std::regex_replace(r.path, std::regex("[^A-Za-z0-9]+"), "_");
    json parameters = json::array();
    static const std::regex parameter(R"(\{([^}/]+)\})");
    for (std::sregex_iterator it(r.path.begin(), r.path.end(), parameter), end; it != end; ++it)
      parameters.push_back({{"name", (*it)[1].str()}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    if (!parameters.empty()) op["parameters"] = parameters;
    if (!r.request.is_null()) op["requestBody"] = {{"required", true}, {"content", {{"application/json", {{"schema", r.request}}}}}};
    op["responses"]["200"] = {
        {"description", "OK"},
        {"content", {{r.content_type, r.response.is_null() ? json{{"schema", {{"type", "string"}}}} : json{{"schema", r.response}}}}}};
    std::vector<int> statuses = r.errors;
    for (int s : {400, 403, 404, 405, 408, 429, 431, 503}) statuses.push_back(s);
    if (!r.request.is_null())
      for (int s : {411, 413, 415}) statuses.push_back(s);
    if (keys && r.needs_key) statuses.push_back(401);
    std::map<int, bool> seen;
    for (int s : statuses) seen[s] = true;
    for (const auto& [s, _] : seen)
      op["responses"][std::to_string(s)] = {{"description", describe(s)},
                                            {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
    if (keys) op["security"] = r.needs_key ? json::array({{{"apiKey", json::array()}}}) : json::array();
    lower = r.method;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    doc["paths"][r.path][lower] = op;
  }
  return doc;
}

Schemas schemas() {
  Schemas k;
  const json string = {{"type", "string"}}, integer = {{"type", "integer"}};
  k.string = string;
  k.integer = integer;
  k.model_info = {
      {"type", "object"},
      {"required",
       {"name", "model", "task", "input", "path", "sha256", "loaded_at", "config", "methods", "default_steps", "max_steps", "examples"}},
      {"properties",
       {{"name", string},
        {"model", string},
        {"task", string},
        {"input", {{"type", "string"}, {"enum", {"texts", "rows"}}}},
        {"path", {{"type", "string"}, {"description", "the model file's name (not where the server keeps it)"}}},
        {"sha256", {{"type", "string"}, {"pattern", "^[0-9a-f]{64}$"}}},
        {"loaded_at", {{"type", "string"}, {"format", "date-time"}}},
        {"config", {{"type", "object"}}},
        {"methods", {{"type", "array"}, {"items", string}}},
        {"default_steps", integer},
        {"max_steps", integer},
        {"examples", {{"type", "array"}, {"items", string}}}}}};
  k.inputs = {{"type", "object"},
              {"properties",
               {{"model", {{"type", "string"}, {"description", "the model's name (optional when one model is served)"}}},
                {"texts", {{"type", "array"}, {"items", string}, {"minItems", 1}}},
                {"rows", {{"type", "array"}, {"items", {{"type", "array"}, {"items", {{"type", "number"}}}}}, {"minItems", 1}}}}}};
  k.explain_request = k.inputs;
  k.explain_request["properties"]["self_attention"] = {{"type", "boolean"}};
  k.explain_request["properties"]["methods"] = {{"oneOf", {{{"type", "array"}, {"items", string}}, string}}};
  k.explain_request["properties"]["steps"] = integer;
  k.explain_request["properties"]["rationales"] = {
      {"type", "array"},
      {"items", {{"type", "array"}, {"items", integer}}},
      {"description", "per text, the positions among its words that people marked: the answer gains each method's plausibility"}};
  k.results = {{"type", "object"},
               {"required", {"model", "results"}},
               {"properties", {{"model", string}, {"results", {{"type", "array"}, {"items", {{"type", "object"}}}}}}}};
  return k;
}

}  // namespace attn::server
