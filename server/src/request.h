#pragma once
/// Request decoding: the JSON bodies of POST /v1/explain and /v1/predict as typed values, each field
/// checked on its own, so a bad body is a 400 naming the field. Parsed into nlohmann::json (a
/// std::map per object: n keys cost n log n, where an ordered object's linear look-ups cost n²).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/models/methods.h"

namespace attn::server {

/// A request that fails: its HTTP status and message (the JSON error's).
struct HttpError : std::runtime_error {
  HttpError(int s, const std::string& message) : std::runtime_error(message), status(s) {}
  int status;
};

/// The body of /v1/explain (`explain`) or /v1/predict.
struct InferBody {
  std::optional<std::string> model;                     ///< "model"
  std::optional<std::vector<std::string>> texts;        ///< "texts"
  std::optional<std::vector<std::vector<float>>> rows;  ///< "rows"
  bool self_attention = false;                          ///< "self_attention" (a transformer's matrices, explain)
  std::vector<models::Method> methods;                  ///< "methods": names, or one comma-separated string (explain)
  std::optional<std::int64_t> steps;                    ///< "steps" (explain)
  /// "rationales" (explain, texts): per text the positions among its words (the explanation's
  /// "words") that people marked; the answer then carries each method's plausibility against them.
  std::optional<std::vector<std::vector<std::int64_t>>> rationales;
};

/// Decodes a body; HttpError 400 for malformed JSON, invalid UTF-8, a number out of range, a field
/// of the wrong type, an unknown method, or an explain-only field on /v1/predict. Unknown fields
/// are ignored.
InferBody decode_infer(const std::string& body, bool explain);

}  // namespace attn::server
