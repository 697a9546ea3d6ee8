// Python's json.dumps, byte for byte: what makes attn's tokenizer.json the file Keras writes. Every
// expected string below is what CPython 3 prints for the same value.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/text/python_json.h"

namespace pyjson = attn::text::pyjson;

namespace {
/// json.dumps(s) for a str.
std::string dumps(std::string_view s) {
  std::string out;
  pyjson::append_string(out, s);
  return out;
}
}  // namespace

TEST_CASE("append_string: json.dumps(str) with ensure_ascii, short escapes and surrogate pairs", "[text][json]") {
  CHECK(dumps("") == R"("")");
  CHECK(dumps("plain words") == R"("plain words")");
  // '"' and '\' escaped, '/' not
  CHECK(dumps(R"(say "hi" \ / done)") == R"py("say \"hi\" \\ / done")py");
  // All printable ASCII: only '"' and '\' change.
  std::string printable;
  for (int c = 0x20; c < 0x7F; ++c) printable += static_cast<char>(c);
  CHECK(dumps(printable) == R"py(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~")py");
  // Control characters: the seven short escapes, \u00XX (lowercase hex) for the rest and for DEL.
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  controls += '\x7F';
  CHECK(dumps(controls) ==
        R"py("\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f)py"
        R"py(\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f\u007f")py");
  // Non-ASCII: 2- and 3-byte UTF-8 as one \uXXXX, 4-byte as a UTF-16 surrogate pair.
  CHECK(dumps("é中\u2028\uFFFF") == R"py("\u00e9\u4e2d\u2028\uffff")py");
  CHECK(dumps("😀\U00010000\U0010FFFF") == R"py("\ud83d\ude00\ud800\udc00\udbff\udfff")py");
}

TEST_CASE("append_string and append_escaped append to what is there, append_escaped without quotes", "[text][json]") {
  std::string out = "[";
  pyjson::append_string(out, "a\"b");
  out += ", ";
  pyjson::append_escaped(out, "caf\xC3\xA9\n");
  CHECK(out == R"py(["a\"b", caf\u00e9\n)py");
}

TEST_CASE("append_escaped as nlohmann writes: only quotes, backslashes and controls escaped", "[text][json]") {
  std::string out;
  pyjson::append_escaped(out, "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" a\\b\n\x01\x7f", pyjson::NonAscii::kAsIs);
  CHECK(out == "caf\xc3\xa9 \xf0\x9f\x98\x80 \\\"q\\\" a\\\\b\\n\\u0001\x7f");
  CHECK(out == nlohmann::json(std::string("caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" a\\b\n\x01\x7f")).dump().substr(1, out.size()));
}

TEST_CASE("DictWriter: a flat dict with Python's default separators, int keys as strings", "[text][json]") {
  std::string out = "x=";
  {
    pyjson::DictWriter d(out);
    d.close();
  }
  CHECK(out == "x={}");
  out.clear();
  pyjson::DictWriter d(out);
  d.key("a");
  out += "1";
  d.key("b");
  pyjson::append_string(out, "x");
  d.key(3LL);
  out += "null";
  d.key("é\"");
  out += "true";
  d.close();
  CHECK(out == R"py({"a": 1, "b": "x", "3": null, "\u00e9\"": true})py");  // json.dumps({"a": 1, "b": "x", 3: None, 'é"': True})
}

TEST_CASE("NestedDictWriter: json.dumps(json.dumps(d)), the tables inside Keras' tokenizer.json", "[text][json]") {
  SECTION("string keys, int values: plain words copied, the rest escaped twice") {
    std::string out;
    pyjson::NestedDictWriter w(out);
    w.key("the");
    w.number(2);
    w.key("q\"uote");
    w.number(1);
    w.key("back\\slash");
    w.number(3);
    w.key("café");
    w.number(4);
    w.key("cr\r");
    w.number(5);
    w.key("😀");
    w.number(6);
    w.key("neg");
    w.number(-7);
    w.close();
    CHECK(
        out ==
        R"py("{\"the\": 2, \"q\\\"uote\": 1, \"back\\\\slash\": 3, \"caf\\u00e9\": 4, \"cr\\r\": 5, \"\\ud83d\\ude00\": 6, \"neg\": -7}")py");
  }
  SECTION("int keys, string values (index_word)") {
    std::string out;
    pyjson::NestedDictWriter w(out);
    w.key(1LL);
    w.string_value("the");
    w.key(2LL);
    w.string_value("say \"hi\"");
    w.key(3LL);
    w.string_value("é\\");
    w.close();
    CHECK(out == R"py("{\"1\": \"the\", \"2\": \"say \\\"hi\\\"\", \"3\": \"\\u00e9\\\\\"}")py");
  }
  SECTION("empty, extreme numbers, control characters") {
    std::string out;
    {
      pyjson::NestedDictWriter empty(out);
      empty.close();
    }
    CHECK(out == R"py("{}")py");
    out.clear();
    pyjson::NestedDictWriter w(out);
    w.key("min");
    w.number(std::numeric_limits<long long>::min());
    w.key("max");
    w.number(std::numeric_limits<long long>::max());
    w.key(std::string_view("a\0", 2));
    w.string_value("\x7F");
    w.close();
    CHECK(out == R"py("{\"min\": -9223372036854775808, \"max\": 9223372036854775807, \"a\\u0000\": \"\\u007f\"}")py");
  }
  SECTION("as a value of an outer dict, as to_json writes it") {
    std::string out;
    pyjson::DictWriter outer(out);
    outer.key("t");
    pyjson::NestedDictWriter inner(out);
    inner.key("a");
    inner.number(1);
    inner.close();
    outer.close();
    CHECK(out == R"py({"t": "{\"a\": 1}"})py");  // json.dumps({"t": json.dumps({"a": 1})})
  }
}
