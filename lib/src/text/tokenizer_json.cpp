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
#include "json_scanner.h"

namespace attn::text {
namespace {

[[noreturn]] void bad(const std::string& source, const std::string& key, const std::string& what) {
  throw std::runtime_error(source + ": " + key + ": " + what);
}

using scan::Scanner;
using scan::SyntaxError;
using scan::Value;

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
