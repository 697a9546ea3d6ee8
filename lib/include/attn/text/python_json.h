#pragma once
/// Byte-exact reproduction of Python's `json.dumps` output for the few shapes Keras writes:
/// strings with `ensure_ascii=True`, and flat dicts with the default separators ", " and ": ".
#include <string>
#include <string_view>

namespace attn::text::pyjson {

/// Appends `s` (valid UTF-8) as a JSON string literal the way `json.dumps(str)` writes it:
/// `\" \\ \n \r \t \b \f` as short escapes, every other character outside U+0020..U+007E as
/// `\uXXXX` with lowercase hex, characters above U+FFFF as UTF-16 surrogate pairs.
void append_string(std::string& out, std::string_view s);

/// How append_escaped writes what is not ASCII: as `\uXXXX` escapes (Python's json.dumps with
/// ensure_ascii, and DEL too) or as its own bytes (nlohmann's dump; what report/ writes).
enum class NonAscii { kEscaped, kAsIs };

/// Appends what append_string writes between the quotes; with NonAscii::kAsIs, what every JSON
/// writer must escape only (`"`, `\\` and U+0000..U+001F), the rest as its bytes.
void append_escaped(std::string& out, std::string_view s, NonAscii non_ascii = NonAscii::kEscaped);

/// Incrementally writes `{"k": v, "k2": v2}` with Python's default separators.
class DictWriter {
 public:
  explicit DictWriter(std::string& out) : out_(out) { out_ += '{'; }
  /// Starts an entry with a string key; the caller appends the value right after.
  void key(std::string_view k) {
    if (!first_) out_ += ", ";
    first_ = false;
    append_string(out_, k);
    out_ += ": ";
  }
  /// Starts an entry with an integer key (Python writes int keys as strings).
  void key(long long k) { key(std::to_string(k)); }
  void close() { out_ += '}'; }

 private:
  std::string& out_;
  bool first_ = true;
};

/// Incrementally writes a flat dict already turned into a JSON string, as Keras' to_json holds its
/// tables (json.dumps(json.dumps(d))): `"{\"k\": 1, \"k2\": 2}"`, in one pass (keys and string
/// values escaped twice; the common plain ASCII word is copied as it is).
class NestedDictWriter {
 public:
  explicit NestedDictWriter(std::string& out) : out_(out) { out_ += "\"{"; }
  /// Starts an entry with a string key; the caller then adds the value (digits, or string_value()).
  void key(std::string_view k) {
    separate();
    string_value(k);
    out_ += ": ";
  }
  /// Starts an entry with an integer key (Python writes int keys as strings).
  void key(long long k) {
    separate();
    out_ += "\\\"";
    number(k);
    out_ += "\\\": ";
  }
  /// A string as an inner JSON string: \" + `s` escaped twice + \".
  void string_value(std::string_view s);
  /// An integer value.
  void number(long long v);
  void close() { out_ += "}\""; }

 private:
  void separate() {
    if (!first_) out_ += ", ";
    first_ = false;
  }
  std::string& out_;
  std::string scratch_;
  bool first_ = true;
};

}  // namespace attn::text::pyjson
