#pragma once
// A strict RFC 8259 JSON scanner over one buffer, for Keras' tokenizer.json (tokenizer_json.cpp):
// it reads values where the caller expects them, copies a string's unescaped runs whole (eight bytes
// at a time) and skips, but checks, what the caller does not want. Faster than building a document
// (a Jigsaw tokenizer.json is 25 MB, read on every start-up) and as strict: every escape, surrogate
// pair and UTF-8 sequence is checked, and a syntax error carries its byte offset.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "attn/text/unicode.h"

namespace attn::text::scan {

/// A syntax error at a byte offset of the text being scanned.
struct SyntaxError {
  std::size_t offset;
  std::string what;
};

/// A JSON value as read. Objects and arrays are only recognised (and skipped), never kept.
struct Value {
  enum class Kind { kNull, kBool, kInteger, kNumber, kString, kObject, kArray } kind = Kind::kNull;
  bool boolean = false;
  std::int64_t integer = 0;
  std::string string;     // kString: the decoded text
  std::string_view text;  // the value as written, for messages
};

/// The bytes a string copies as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> plain_ascii() {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}
constexpr std::array<bool, 256> kPlainAscii = plain_ascii();

/// What JSON's two-character escapes stand for, by the character after the backslash (0: not one).
constexpr std::array<char, 256> two_character_escapes() {
  std::array<char, 256> t{};
  for (const char c : {'"', '\\', '/'}) t[static_cast<unsigned char>(c)] = c;
  t['b'] = '\b';
  t['f'] = '\f';
  t['n'] = '\n';
  t['r'] = '\r';
  t['t'] = '\t';
  return t;
}
constexpr std::array<char, 256> kTwoCharacterEscapes = two_character_escapes();

/// The end of the run of bytes at `p` that a string copies as they are (see kPlainAscii). Eight
/// bytes at a time where it can: runs in the tables are short, and a loop that stops at every byte
/// pays a mispredicted branch at the end of each run.
inline const char* plain_run_end(const char* p, const char* end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  // Per byte: its high bit set in `mask` when it is '"', '\\', below 0x20 or above 0x7F. (A byte above
  // the first such one may be marked too, by a borrow; the lowest mark is always right.)
  const auto zero_bytes = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  for (; end - p >= 8; p += 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    const std::uint64_t mask =
        zero_bytes(w ^ (kOnes * '"')) | zero_bytes(w ^ (kOnes * '\\')) | ((w - kOnes * 0x20) & ~w & kHighs) | (w & kHighs);
    if (mask) return p + __builtin_ctzll(mask) / 8;
  }
#endif
  while (p < end && kPlainAscii[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

/// A strict JSON reader over one buffer: whitespace, strings (escapes, surrogate pairs and UTF-8
/// checked), numbers, literals, and nested values to skip (at most kMaxDepth deep).
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  void skip_whitespace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  /// The next character after whitespace, '\0' at the end.
  char peek() {
    skip_whitespace();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }
  bool at_end() { return peek() == '\0' && i_ >= s_.size(); }
  /// The bytes after the cursor.
  std::size_t remaining() const { return s_.size() - i_; }

  /// A string at the cursor, decoded into `out` (replacing its contents); with `out` null, checked
  /// and skipped.
  void string(std::string* out) {
    if (out) out->clear();
    expect('"');
    const char* const end = s_.data() + s_.size();
    for (;;) {
      const char* const run = s_.data() + i_;
      const char* const p = plain_run_end(run, end);  // copied whole
      if (out) out->append(run, static_cast<std::size_t>(p - run));
      i_ = static_cast<std::size_t>(p - s_.data());
      if (p == end) fail("unterminated string");
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') {
        ++i_;
        return;
      }
      if (c == '\\') {
        const char plain = p + 1 < end ? kTwoCharacterEscapes[static_cast<unsigned char>(p[1])] : 0;
        if (plain) {  // the common escapes, inline
          if (out) *out += plain;
          i_ += 2;
        } else {
          ++i_;
          escape(out);
        }
      } else if (c >= 0x80) {
        utf8_run(out);
      } else {
        fail("control character in a string");
      }
    }
  }
  void string(std::string& out) { string(&out); }

  /// Any value at the cursor; objects and arrays are skipped, and so is a string's text when
  /// `strings` is kSkip.
  enum class Strings { kDecode, kSkip };
  Value value(Strings strings = Strings::kDecode) {
    Value v;
    const char c = peek();
    const std::size_t start = i_;
    if (c == '"') {
      v.kind = Value::Kind::kString;
      string(strings == Strings::kDecode ? &v.string : nullptr);
    } else if (c == '{' || c == '[') {
      v.kind = c == '{' ? Value::Kind::kObject : Value::Kind::kArray;
      skip(0);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else if (literal("true")) {
      v.kind = Value::Kind::kBool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = Value::Kind::kBool;
    } else if (!literal("null")) {
      fail("expected a value");
    }
    v.text = s_.substr(start, i_ - start);
    return v;
  }

  /// Reads an object's members: `member(key)` is called with the cursor on each value and must read it.
  template <class Member>
  void object(std::string& key, Member&& member) {
    expect('{');
    if (consume('}')) return;
    do {
      if (peek() != '"') fail("expected a key");
      string(key);
      expect(':');
      peek();
      member(key);
    } while (consume(','));
    expect('}');
  }

  [[noreturn]] void fail(const std::string& what) const { fail_at(i_, what); }
  [[noreturn]] void fail_at(std::size_t offset, const std::string& what) const { throw SyntaxError{offset, what}; }

 private:
  static constexpr int kMaxDepth = 256;

  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<unsigned>(h - 'A' + 10);
      else
        fail_at(i_ - 1, "bad hex digit in a \\u escape");
    }
    return v;
  }

  /// A run of non-ASCII bytes at the cursor: checked as UTF-8, appended to `out` when given.
  void utf8_run(std::string* out) {
    const std::size_t start = i_;
    while (i_ < s_.size() && static_cast<unsigned char>(s_[i_]) >= 0x80) ++i_;
    const std::string_view run = s_.substr(start, i_ - start);
    const std::size_t invalid = find_invalid_utf8(run);
    if (invalid != std::string_view::npos) fail_at(start + invalid, "invalid UTF-8");
    if (out) out->append(run);
  }

  /// The escape after a backslash, appended to `out` decoded (when given).
  void escape(std::string* out) {
    if (i_ >= s_.size()) fail("unterminated string");
    const char e = s_[i_++];
    if (e != 'u') {  // one of JSON's two-character escapes
      const char plain = kTwoCharacterEscapes[static_cast<unsigned char>(e)];
      if (!plain) fail_at(i_ - 1, "bad escape");
      if (out) *out += plain;
      return;
    }
    unsigned cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (s_.substr(i_, 2) != "\\u") fail("high surrogate without its low surrogate");
      i_ += 2;
      const unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate without its low surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (!out) return;
    std::string& o = *out;
    if (cp < 0x80) {
      o += static_cast<char>(cp);
    } else if (cp < 0x800) {
      o += static_cast<char>(0xC0 | (cp >> 6));
      o += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      o += static_cast<char>(0xE0 | (cp >> 12));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      o += static_cast<char>(0xF0 | (cp >> 18));
      o += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  /// JSON's number grammar; an integer without fraction or exponent that fits int64 is kInteger.
  void number(Value& v) {
    const bool negative = s_[i_] == '-';
    if (negative) ++i_;
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("bad number");
    bool fits = true;
    std::uint64_t magnitude = 0;
    if (s_[i_] == '0') {
      ++i_;
    } else {
      for (; i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; ++i_) {
        const auto d = static_cast<std::uint64_t>(s_[i_] - '0');
        if (magnitude > (UINT64_MAX - d) / 10) fits = false;
        magnitude = magnitude * 10 + d;
      }
    }
    bool integral = true;
    if (i_ < s_.size() && s_[i_] == '.') {
      integral = false;
      ++i_;
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("bad number");
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      integral = false;
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') fail("bad number");
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    }
    const std::uint64_t limit = negative ? static_cast<std::uint64_t>(INT64_MAX) + 1 : static_cast<std::uint64_t>(INT64_MAX);
    if (integral && fits && magnitude <= limit) {
      v.kind = Value::Kind::kInteger;
      v.integer = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
    } else {
      v.kind = Value::Kind::kNumber;
    }
  }

  void skip(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    const char c = peek();
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      if (consume(close)) return;
      do {
        if (c == '{') {
          if (peek() != '"') fail("expected a key");
          string(nullptr);
          expect(':');
        }
        skip(depth + 1);
      } while (consume(','));
      expect(close);
    } else {
      value(Strings::kSkip);
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace attn::text::scan
