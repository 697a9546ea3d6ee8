#include "request.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace attn::server {

/// Objects as std::map: a body with n keys costs n log n (nlohmann::ordered_json looks keys up linearly).
using JsonMap = nlohmann::json;

namespace {

const JsonMap* find(const JsonMap& body, const char* field) {
  const auto it = body.find(field);
  return it == body.end() ? nullptr : &*it;
}

std::vector<std::string> strings(const JsonMap& items, const char* field) {
  std::vector<std::string> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) throw HttpError(400, std::string(field) + "[" + std::to_string(i) + "] must be a string");
    out.push_back(items[i].get<std::string>());
  }
  return out;
}

std::vector<std::vector<float>> rows(const JsonMap& items) {
  std::vector<std::vector<float>> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string where = "rows[" + std::to_string(i) + "]";
    if (!items[i].is_array()) throw HttpError(400, where + " must be an array of numbers");
    std::vector<float> row;
    for (const JsonMap& v : items[i]) {
      if (!v.is_number()) throw HttpError(400, where + " must be an array of numbers");
      const double d = v.get<double>();
      if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max())
        throw HttpError(400, where + " has a number out of a float's range");
      row.push_back(static_cast<float>(d));
    }
    out.push_back(std::move(row));
  }
  return out;
}

/// Field "methods": a comma-separated string or a non-empty array of method names.
std::vector<models::Method> methods(const JsonMap& m) {
  std::vector<models::Method> out;
  try {
    if (m.is_string()) return models::parse_method_list(m.get<std::string>(), "field \"methods\"");
    if (!m.is_array() || m.empty()) throw HttpError(400, "field \"methods\" must be a non-empty array of method names");
    for (const JsonMap& name : m) {
      if (!name.is_string()) throw HttpError(400, "field \"methods\" must be an array of method names");
      out.push_back(models::parse_method(name.get<std::string>(), "field \"methods\""));
    }
  } catch (const std::invalid_argument& e) {
    throw HttpError(400, e.what());
  }
  return out;
}

/// Field "rationales": per text, the positions of its marked words (one entry per text).
std::vector<std::vector<std::int64_t>> rationales(const JsonMap& r, const std::optional<std::vector<std::string>>& texts) {
  if (!r.is_array()) throw HttpError(400, "field \"rationales\" must be an array (per text, the positions of its marked words)");
  std::vector<std::vector<std::int64_t>> all;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::string where = "rationales[" + std::to_string(i) + "]";
    if (!r[i].is_array()) throw HttpError(400, where + " must be an array of word positions");
    std::vector<std::int64_t> marked;
    for (const JsonMap& v : r[i]) {
      if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 1u << 30))
        throw HttpError(400, where + " must be an array of word positions (integers)");
      marked.push_back(v.get<std::int64_t>());
    }
    all.push_back(std::move(marked));
  }
  if (!texts) throw HttpError(400, "field \"rationales\" goes with \"texts\"");
  if (all.size() != texts->size())
    throw HttpError(400,
                    "field \"rationales\" has " + std::to_string(all.size()) + " entries for " + std::to_string(texts->size()) + " texts");
  return all;
}

}  // namespace

InferBody decode_infer(const std::string& text, bool explain) {
  JsonMap body;
  try {
    body = JsonMap::parse(text);
  } catch (const JsonMap::exception& e) {  // parse_error, and out_of_range for a number past a double (1e400)
    throw HttpError(400, std::string("malformed JSON (or invalid UTF-8, or a number out of range): ") + e.what());
  }
  if (!body.is_object()) throw HttpError(400, "the body must be a JSON object");
  InferBody out;
  if (const JsonMap* m = find(body, "model")) {
    if (!m->is_string()) throw HttpError(400, "field \"model\" must be a string");
    out.model = m->get<std::string>();
  }
  for (const char* field : {"texts", "rows"}) {
    const JsonMap* items = find(body, field);
    if (!items) continue;
    if (!items->is_array()) throw HttpError(400, std::string("field \"") + field + "\" must be an array");
    if (items->empty()) throw HttpError(400, std::string("field \"") + field + "\" is empty");
    if (std::string(field) == "texts")
      out.texts = strings(*items, "texts");
    else
      out.rows = rows(*items);
  }
  if (const JsonMap* s = find(body, "self_attention")) {
    if (!s->is_boolean()) throw HttpError(400, "field \"self_attention\" must be true or false");
    out.self_attention = s->get<bool>();
  }
  if (!explain) {
    for (const char* field : {"methods", "steps", "rationales"})
      if (find(body, field)) throw HttpError(400, std::string("field \"") + field + "\" is for /v1/explain");
    return out;
  }
  if (const JsonMap* m = find(body, "methods")) out.methods = methods(*m);
  if (const JsonMap* s = find(body, "steps")) {
    if (!s->is_number_integer()) throw HttpError(400, "field \"steps\" must be an integer");
    out.steps = s->is_number_unsigned() && s->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    ? std::numeric_limits<std::int64_t>::max()
                    : s->get<std::int64_t>();
  }
  if (const JsonMap* r = find(body, "rationales")) out.rationales = rationales(*r, out.texts);
  return out;
}

}  // namespace attn::server
