// Reading Keras' tokenizer.json (Tokenizer::from_json). The file is two levels of JSON objects
// whose five word tables are JSON strings that hold JSON objects; a Jigsaw-sized one is 25 MB, and
// every explain, evaluate and served model reads one on start-up. A general JSON parser reads it
// byte by byte into a document (nlohmann: ~200 MB/s, 120 ms for an 8 MB file); the scanner below
// is strict RFC 8259 JSON too, but reads only these shapes and copies unescaped runs whole, and
// from_json reads only the tables it is asked for.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <stdexcept>

#include "attn/text/tokenizer.h"
#include "attn/text/unicode.h"

namespace attn::text {
namespace {

[[noreturn]] void bad(const std::string& source, const std::string& key, const std::string& what) {
  throw std::runtime_error(source + ": " + key + ": " + what);
}

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
const char* plain_run_end(const char* p, const char* end) {
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

/// The config's double-encoded tables, by name.
enum Table { kWordCounts, kWordDocs, kIndexDocs, kIndexWord, kWordIndex, kTables };
constexpr const char* kTableNames[kTables] = {"word_counts", "word_docs", "index_docs", "index_word", "word_index"};

/// Calls `entry(key, value)` for each member of the flat object in a table's text, in file order.
template <class Entry>
void for_each_entry(const std::string& table, const char* name, const std::string& source, Entry&& entry) {
  try {
    Scanner sc(table);
    std::string key;
    sc.object(key, [&](const std::string& k) {
      const Value v = sc.value();
      if (v.kind == Value::Kind::kObject || v.kind == Value::Kind::kArray) sc.fail("expected a flat object");
      entry(k, v);
    });
    if (!sc.at_end()) sc.fail("trailing characters after the object");
  } catch (const SyntaxError& e) {
    bad(source, std::string("config.") + name, "not a JSON object of words: " + e.what + " at byte " + std::to_string(e.offset));
  }
}

std::int64_t integer(const Value& v, const std::string& source, const std::string& key) {
  if (v.kind != Value::Kind::kInteger) bad(source, key, "expected an integer, got " + std::string(v.text.substr(0, 40)));
  return v.integer;
}

/// The value of table `table`'s entry `word`, an integer (the key for a message is made only then).
std::int64_t entry_integer(const Value& v, const std::string& source, const char* table, const std::string& word) {
  return v.kind == Value::Kind::kInteger ? v.integer : integer(v, source, std::string("config.") + table + "['" + word + "']");
}

std::int32_t index_key(const std::string& k, const std::string& source, const char* table) {
  std::int64_t value = 0;
  bool ok = !k.empty() && k.size() <= 10 && k[0] != '0';
  for (const char c : k) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) value = value * 10 + (c - '0');
  }
  if (!ok || value < 1 || value > INT32_MAX) bad(source, std::string("config.") + table, "key '" + k + "' is not a positive integer");
  return static_cast<std::int32_t>(value);
}

/// Whether from_json reads table `t` (with kForTransform only word_index; the others are only checked as JSON).
bool wanted(TokenizerTables tables, int t) { return tables == TokenizerTables::kAll || t == kWordIndex; }

/// What the file's two outer levels hold: class_name, and config's settings and tables.
struct OuterLevels {
  Value class_name;
  bool has_config = false, config_is_object = false, top_is_object = true;
  std::map<std::string, Value> settings;
  std::string text[kTables];  // a wanted table's text, decoded
  Value table_value[kTables];
  bool has_table[kTables] = {};
};

/// Reads the config object at the cursor: each table's text when wanted (else checked and skipped), each other member as a setting.
void read_config(Scanner& sc, std::string& config_key, TokenizerTables tables, OuterLevels& levels) {
  sc.object(config_key, [&](const std::string& ck) {
    for (int t = 0; t < kTables; ++t) {
      if (ck != kTableNames[t]) continue;
      levels.has_table[t] = true;
      if (sc.peek() == '"' && wanted(tables, t)) {
        levels.table_value[t] = Value();
        levels.table_value[t].kind = Value::Kind::kString;
        // (decoded, a string is no longer than what is left of the file: reserved at once, as
        // address space that costs only the pages the table fills, instead of copied as it grows)
        levels.text[t].reserve(sc.remaining());
        sc.string(levels.text[t]);
      } else {
        levels.table_value[t] = sc.value(Scanner::Strings::kSkip);  // a string not wanted is checked, not kept
      }
      return;
    }
    levels.settings[ck] = sc.value();
  });
}

/// Reads the two outer levels: class_name, and config's settings and tables (a table not wanted is
/// skipped, but still checked as JSON). A repeated key counts once, the last time (as in Python).
OuterLevels read_outer_levels(std::string_view json, const std::string& source, TokenizerTables tables) {
  OuterLevels levels;
  try {
    Scanner sc(json);
    std::string key, config_key;
    if (sc.peek() != '{') {
      levels.top_is_object = false;
      sc.value();
    } else
      sc.object(key, [&](const std::string& k) {
        if (k == "config") {
          levels.has_config = true;
          levels.config_is_object = sc.peek() == '{';
          levels.settings.clear();
          if (!levels.config_is_object) {
            sc.value();
            return;
          }
          read_config(sc, config_key, tables, levels);
        } else if (k == "class_name") {
          levels.class_name = sc.value();
        } else {
          sc.value(Scanner::Strings::kSkip);
        }
      });
    if (!sc.at_end()) sc.fail("trailing characters after the object");
  } catch (const SyntaxError& e) {
    throw std::runtime_error(source + ": not valid JSON: " + e.what + " at byte " + std::to_string(e.offset));
  }
  return levels;
}

/// Checks the outer levels' shape: an object, class_name "Tokenizer" (when given), config an object.
void check_outer_levels(const OuterLevels& levels, const std::string& source) {
  const Value& class_name = levels.class_name;
  if (!levels.top_is_object) bad(source, "(top level)", "expected an object");
  if (!class_name.text.empty() && !(class_name.kind == Value::Kind::kString && class_name.string == "Tokenizer"))
    bad(source, "class_name", "expected \"Tokenizer\", got " + std::string(class_name.text.substr(0, 40)));
  if (!levels.has_config) bad(source, "config", "missing");
  if (!levels.config_is_object) bad(source, "config", "expected an object");
}

/// The constructor arguments in config's settings: num_words, filters, lower, split, char_level, oov_token.
TokenizerOptions read_options(const std::map<std::string, Value>& settings, const std::string& source) {
  const auto setting = [&](const char* key) -> const Value& {
    const auto it = settings.find(key);
    if (it == settings.end()) bad(source, std::string("config.") + key, "missing");
    return it->second;
  };
  const auto str = [&](const char* key) {
    const Value& v = setting(key);
    if (v.kind != Value::Kind::kString) bad(source, std::string("config.") + key, "expected a string");
    return v.string;
  };
  const auto boolean = [&](const char* key) {
    const Value& v = setting(key);
    if (v.kind != Value::Kind::kBool) bad(source, std::string("config.") + key, "expected true or false");
    return v.boolean;
  };
  TokenizerOptions opt;
  const Value& num_words = setting("num_words");
  if (num_words.kind != Value::Kind::kNull) opt.num_words = integer(num_words, source, "config.num_words");
  opt.filters = str("filters");
  opt.lower = boolean("lower");
  opt.split = str("split");
  opt.char_level = boolean("char_level");
  const Value& oov = setting("oov_token");
  if (oov.kind != Value::Kind::kNull) {
    if (oov.kind != Value::Kind::kString) bad(source, "config.oov_token", "expected a string or null");
    opt.oov_token = oov.string;
  }
  if (opt.split.empty()) bad(source, "config.split", "must not be empty");
  return opt;
}

/// Checks that every wanted table is present and a string (the JSON object it holds is read later).
void check_tables(const OuterLevels& levels, const std::string& source, TokenizerTables tables) {
  for (int k = 0; k < kTables; ++k) {
    if (!wanted(tables, k)) continue;
    if (!levels.has_table[k]) bad(source, std::string("config.") + kTableNames[k], "missing");
    if (levels.table_value[k].kind != Value::Kind::kString)
      bad(source, std::string("config.") + kTableNames[k], "expected a string holding a JSON object");
  }
}

/// Reads word_counts (the vocabulary, in file order, and its counts) and word_docs; index_docs, derived, is only checked.
void read_counts(const OuterLevels& levels, const std::string& source, StringTable& vocab, std::vector<std::int64_t>& counts,
                 std::vector<std::int64_t>& docs) {
  for_each_entry(levels.text[kWordCounts], "word_counts", source, [&](const std::string& word, const Value& count) {
    const std::int32_t id = vocab.intern(word);
    if (id != static_cast<std::int32_t>(counts.size())) bad(source, "config.word_counts", "repeated word '" + word + "'");
    counts.push_back(entry_integer(count, source, "word_counts", word));
    docs.push_back(0);
  });
  for_each_entry(levels.text[kWordDocs], "word_docs", source, [&](const std::string& word, const Value& n) {
    const std::int32_t id = vocab.find(word);
    if (id == StringTable::kMissing) bad(source, "config.word_docs", "word '" + word + "' is not in word_counts");
    docs[static_cast<std::size_t>(id)] = entry_integer(n, source, "word_docs", word);
  });
  for_each_entry(levels.text[kIndexDocs], "index_docs", source, [](const std::string&, const Value&) {});  // derived; form only
}

/// word_index's entries in file order: each word (kept one after another in one buffer: a
/// vocabulary's 220,000 words in a few allocations, not one each) and its index.
class WordIndex {
 public:
  void reserve(std::size_t n) {
    ends_.reserve(n);
    indices_.reserve(n);
  }
  void add(std::string_view word, std::int32_t index) {
    words_.append(word);
    ends_.push_back(words_.size());
    indices_.push_back(index);
  }
  std::size_t size() const { return indices_.size(); }
  std::string_view word(std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(words_).substr(begin, ends_[i] - begin);
  }
  std::int32_t index(std::size_t i) const { return indices_[i]; }
  std::size_t word_bytes() const { return words_.size(); }

 private:
  std::string words_;
  std::vector<std::size_t> ends_;
  std::vector<std::int32_t> indices_;
};

/// Reads word_index's entries in file order, each index checked to be a positive int32.
WordIndex read_word_index(const std::string& table, const std::string& source) {
  WordIndex word_index;
  word_index.reserve(static_cast<std::size_t>(std::count(table.begin(), table.end(), ':')));
  for_each_entry(table, "word_index", source, [&](const std::string& word, const Value& value) {
    const std::int64_t index = entry_integer(value, source, "word_index", word);
    if (index < 1 || index > INT32_MAX) bad(source, "config.word_index['" + word + "']", "index must be >= 1");
    word_index.add(word, static_cast<std::int32_t>(index));
  });
  return word_index;
}

/// Whether `word` is the OOV token.
bool is_oov(const std::optional<std::string>& oov_token, std::string_view word) { return oov_token && word == *oov_token; }

/// Interns the counted words of a tokenizer read for transforming: word_index's keys, but for the OOV
/// token, which is one of them only when it collides with a counted word (it then has a later index
/// than 1: see rebuild_index). Returns each entry's id (StringTable::kMissing for the OOV token), so
/// that each word is looked up once.
std::vector<std::int32_t> intern_counted_words(const WordIndex& word_index, const std::optional<std::string>& oov_token,
                                               StringTable& vocab) {
  std::int32_t oov_index = 0;
  for (std::size_t i = 0; i < word_index.size(); ++i)
    if (is_oov(oov_token, word_index.word(i))) oov_index = word_index.index(i);
  std::vector<std::size_t> counted;  // the entries that are words of the vocabulary
  counted.reserve(word_index.size());
  for (std::size_t i = 0; i < word_index.size(); ++i)
    if (!is_oov(oov_token, word_index.word(i)) || oov_index != 1) counted.push_back(i);
  vocab.reserve(counted.size(), word_index.word_bytes());
  std::vector<std::int32_t> ids(word_index.size(), StringTable::kMissing);
  vocab.intern_each(
      counted.size(), [&](std::size_t k) { return word_index.word(counted[k]); },
      [&](std::size_t k, std::int32_t id) { ids[counted[k]] = id; });
  return ids;
}

/// Each word_index entry's id in `vocab` (StringTable::kMissing when it is not there).
std::vector<std::int32_t> ids_of(const WordIndex& word_index, const StringTable& vocab) {
  std::vector<std::int32_t> ids;
  ids.reserve(word_index.size());
  for (std::size_t i = 0; i < word_index.size(); ++i) ids.push_back(vocab.find(word_index.word(i)));
  return ids;
}

/// Sets each vocabulary word's index (`index_of`, by id) and the OOV token's (`oov_index`) from word_index and
/// its entries' `ids`; returns the largest index.
std::int32_t assign_indices(const WordIndex& word_index, const std::vector<std::int32_t>& ids, const std::optional<std::string>& oov_token,
                            std::size_t vocab_size, const std::string& source, std::vector<std::int32_t>& index_of,
                            std::int32_t& oov_index) {
  index_of.assign(vocab_size, 0);
  std::int32_t max_index = 0;
  for (std::size_t i = 0; i < word_index.size(); ++i) {
    const std::string_view word = word_index.word(i);
    const std::int32_t index = word_index.index(i);
    if (ids[i] != StringTable::kMissing)
      index_of[static_cast<std::size_t>(ids[i])] = index;
    else if (!is_oov(oov_token, word))
      bad(source, "config.word_index", "word '" + std::string(word) + "' is neither in word_counts nor the oov_token");
    if (is_oov(oov_token, word)) oov_index = index;
    max_index = std::max(max_index, index);
  }
  return max_index;
}

/// index_word's entries: an index and its word.
using IndexWord = std::vector<std::pair<std::int32_t, std::string>>;

/// Reads index_word's entries in file order (keys checked to be positive integers), raising `max_index` to the largest index.
IndexWord read_index_word(const std::string& table, const std::string& source, std::int32_t& max_index) {
  IndexWord index_word;
  for_each_entry(table, "index_word", source, [&](const std::string& key, const Value& value) {
    const std::int32_t index = index_key(key, source, "index_word");
    if (value.kind != Value::Kind::kString) bad(source, "config.index_word['" + key + "']", "expected a string");
    index_word.emplace_back(index, value.string);
    max_index = std::max(max_index, index);
  });
  return index_word;
}

}  // namespace

Tokenizer Tokenizer::from_json(std::string_view json, const std::string& source, TokenizerTables tables) {
  OuterLevels levels = read_outer_levels(json, source, tables);
  check_outer_levels(levels, source);
  Tokenizer t(read_options(levels.settings, source));
  t.tables_ = tables;
  if (levels.settings.count("document_count"))
    t.document_count_ = integer(levels.settings["document_count"], source, "config.document_count");
  check_tables(levels, source, tables);
  const std::optional<std::string>& oov_token = t.options_.oov_token;
  if (tables == TokenizerTables::kAll) read_counts(levels, source, t.vocab_, t.counts_, t.docs_);

  // word_index is what texts_to_sequences reads.
  const WordIndex word_index = read_word_index(levels.text[kWordIndex], source);
  const std::vector<std::int32_t> ids =
      tables == TokenizerTables::kForTransform ? intern_counted_words(word_index, oov_token, t.vocab_) : ids_of(word_index, t.vocab_);
  std::int32_t max_index =
      assign_indices(word_index, ids, oov_token, static_cast<std::size_t>(t.vocab_.size()), source, t.index_of_, t.oov_index_);

  if (tables == TokenizerTables::kForTransform) {  // index_word is word_index inverted
    t.index_word_.assign(static_cast<std::size_t>(max_index) + 1, kNoWord);
    for (std::size_t i = 0; i < word_index.size(); ++i)
      t.index_word_[static_cast<std::size_t>(word_index.index(i))] = ids[i] != StringTable::kMissing ? ids[i] : kOovWord;
    return t;
  }
  const IndexWord index_word = read_index_word(levels.text[kIndexWord], source, max_index);
  t.index_word_.assign(static_cast<std::size_t>(max_index) + 1, kNoWord);
  for (const auto& [index, word] : index_word) {
    const std::int32_t id = t.vocab_.find(word);
    if (id != StringTable::kMissing)
      t.index_word_[static_cast<std::size_t>(index)] = id;
    else if (is_oov(oov_token, word))
      t.index_word_[static_cast<std::size_t>(index)] = kOovWord;
    else
      bad(source, "config.index_word['" + std::to_string(index) + "']", "word '" + word + "' is neither in word_counts nor the oov_token");
  }
  return t;
}

}  // namespace attn::text
