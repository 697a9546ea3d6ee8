// Request decoding (server/src/request.h): each field of an explain or predict body checked on its
// own, every refusal a 400 naming the field; numbers past a double or a float are refused, not 500s.
#include <string>

#include <catch2/catch.hpp>

#include "request.h"

using attn::server::decode_infer;
using attn::server::HttpError;

namespace {

int status_of(const std::string& body, bool explain = true) {
  try {
    decode_infer(body, explain);
  } catch (const HttpError& e) {
    return e.status;
  }
  return 200;
}

std::string message_of(const std::string& body, bool explain = true) {
  try {
    decode_infer(body, explain);
  } catch (const HttpError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a body's fields decode to typed values", "[server][request]") {
  const auto b = decode_infer(R"({"model": "toxic", "texts": ["a", "b"], "methods": ["gradient", "leave-one-out"], "steps": 8,
                                  "self_attention": true, "unknown": {"ignored": 1}})",
                              true);
  CHECK(b.model == std::optional<std::string>("toxic"));
  CHECK(b.texts == std::optional<std::vector<std::string>>({"a", "b"}));
  CHECK_FALSE(b.rows.has_value());
  CHECK(attn::models::method_names(b.methods) == "gradient,leave-one-out");
  CHECK(b.steps == std::optional<std::int64_t>(8));
  CHECK(b.self_attention);
  const auto rows = decode_infer(R"({"rows": [[0.5, -1], [2, 3e10]]})", false);
  REQUIRE(rows.rows.has_value());
  CHECK(rows.rows->at(1).at(1) == Approx(3e10f));
  CHECK(attn::models::method_names(decode_infer(R"({"texts": ["a"], "methods": "gradient,grad-input"})", true).methods) ==
        "gradient,grad-input");
  const auto marked = decode_infer(R"({"texts": ["you are stupid", "fine"], "rationales": [[2], []]})", true);
  CHECK(marked.rationales == std::optional<std::vector<std::vector<std::int64_t>>>({{2}, {}}));
}

TEST_CASE("a bad body is a 400 naming what is wrong", "[server][request]") {
  CHECK(status_of("{not json") == 400);
  CHECK(status_of("{\"texts\": [\"caf\xe9\"]}") == 400);                                           // invalid UTF-8
  CHECK(message_of(R"({"texts": ["a"], "x": 1e400})").find("out of range") != std::string::npos);  // past a double
  CHECK(message_of(R"({"rows": [[1e300]]})").find("rows[0]") != std::string::npos);                // past a float
  CHECK(message_of("[1, 2]").find("JSON object") != std::string::npos);
  CHECK(message_of(R"({"model": 3})").find("\"model\"") != std::string::npos);
  CHECK(message_of(R"({"texts": "one"})").find("\"texts\" must be an array") != std::string::npos);
  CHECK(message_of(R"({"texts": []})").find("\"texts\" is empty") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a", 3]})").find("texts[1]") != std::string::npos);
  CHECK(message_of(R"({"rows": [[1, "x"]]})").find("rows[0]") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "methods": 5})").find("\"methods\"") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "methods": ["shap"]})").find("unknown method 'shap'") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "methods": []})").find("\"methods\"") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "steps": "9"})").find("\"steps\"") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "self_attention": 1})").find("\"self_attention\"") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "methods": ["gradient"]})", false).find("/v1/explain") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "steps": 3})", false).find("/v1/explain") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "rationales": [[0]]})", false).find("/v1/explain") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "rationales": [[0], [1]]})").find("2 entries for 1 texts") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "rationales": [["a"]]})").find("rationales[0]") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "rationales": [0]})").find("rationales[0]") != std::string::npos);
  CHECK(message_of(R"({"texts": ["a"], "rationales": {"0": [0]}})").find("\"rationales\" must be an array") != std::string::npos);
  CHECK(message_of(R"({"rows": [[1]], "rationales": [[0]]})").find("goes with \"texts\"") != std::string::npos);
}

TEST_CASE("a body with many keys decodes (objects are maps, not lists searched end to end)", "[server][request]") {
  std::string body = "{";
  for (int i = 0; i < 60000; ++i) body += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  body += "\"texts\": [\"a\"]}";
  const auto b = decode_infer(body, false);
  CHECK(b.texts == std::optional<std::vector<std::string>>({"a"}));
}
