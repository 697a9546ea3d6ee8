// The strict JSON scanner behind tokenizer.json (lib/src/text/json_scanner.h): values decoded where
// the caller expects them, what it skips still checked, every syntax error at its byte offset.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "text/json_scanner.h"

using attn::text::scan::Scanner;
using attn::text::scan::SyntaxError;
using attn::text::scan::Value;

namespace {

/// The offset and message of the error scanning one value of `json` raises ("" and 0: none).
std::pair<std::size_t, std::string> scan_error(const std::string& json) {
  try {
    Scanner sc(json);
    sc.value();
    if (!sc.at_end()) sc.fail("trailing text");
  } catch (const SyntaxError& e) {
    return {e.offset, e.what};
  }
  return {0, ""};
}

}  // namespace

TEST_CASE("strings decode their escapes, surrogate pairs and UTF-8 runs", "[text][json_scanner]") {
  Scanner sc(R"( "a\"b\\c\/d\n\t\u00e9\ud83d\ude00 caf)"
             "\xc3\xa9\"");
  const Value v = sc.value();
  CHECK(v.kind == Value::Kind::kString);
  CHECK(v.string == "a\"b\\c/d\n\t\xc3\xa9\xf0\x9f\x98\x80 caf\xc3\xa9");
  CHECK(sc.at_end());
}

TEST_CASE("numbers, literals and skipped containers", "[text][json_scanner]") {
  Scanner sc(R"({"n": -12, "x": 1.5e3, "t": true, "f": false, "z": null, "o": {"a": [1, {"b": "c"}]}, "l": []})");
  std::string key;
  std::vector<std::string> keys;
  std::vector<Value::Kind> kinds;
  std::int64_t n = 0;
  sc.object(key, [&](const std::string& k) {
    const Value v = sc.value();
    keys.push_back(k);
    kinds.push_back(v.kind);
    if (k == "n") n = v.integer;
  });
  CHECK(keys == std::vector<std::string>{"n", "x", "t", "f", "z", "o", "l"});
  CHECK(kinds == std::vector<Value::Kind>{Value::Kind::kInteger, Value::Kind::kNumber, Value::Kind::kBool, Value::Kind::kBool,
                                          Value::Kind::kNull, Value::Kind::kObject, Value::Kind::kArray});
  CHECK(n == -12);
  CHECK(sc.at_end());
}

TEST_CASE("what RFC 8259 forbids is an error at its offset, also inside what is skipped", "[text][json_scanner]") {
  CHECK(scan_error(R"("abc)").second == "unterminated string");
  CHECK(scan_error("\"a\xff\"") == std::make_pair(std::size_t{2}, std::string("invalid UTF-8")));
  CHECK(scan_error("\"a\x01\"").first == 2);         // a raw control character
  CHECK(scan_error(R"("\x")").first >= 1);           // not an escape
  CHECK(!scan_error(R"("\ud83d")").second.empty());  // a lone surrogate
  CHECK(!scan_error("01").second.empty());           // a leading zero
  CHECK(!scan_error("[1, 2,]").second.empty());      // a trailing comma, in a skipped array
  CHECK(!scan_error(R"({"a" 1})").second.empty());
  CHECK(!scan_error("nul").second.empty());
  CHECK(scan_error(std::string(300, '[') + std::string(300, ']')).second == "nested too deeply");
  CHECK(scan_error(std::string(200, '[') + std::string(200, ']')).second.empty());
}
