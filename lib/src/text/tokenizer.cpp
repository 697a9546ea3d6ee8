#include "attn/text/tokenizer.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/text/python_json.h"
#include "attn/text/unicode.h"

namespace attn::text {

TransformStats& TransformStats::operator+=(const TransformStats& o) {
  tokens += o.tokens;
  beyond_num_words += o.beyond_num_words;
  unknown += o.unknown;
  emitted += o.emitted;
  return *this;
}

std::vector<Sequence> SequenceBatch::to_sequences() const {
  std::vector<Sequence> out(size());
  for (std::size_t i = 0; i < size(); ++i) out[i].assign(row(i), row(i) + length(i));
  return out;
}

namespace {
SplitOptions split_options(const TokenizerOptions& o) {
  SplitOptions s;
  s.filters = o.filters;
  s.lower = o.lower;
  s.split = o.split;
  s.char_level = o.char_level;
  return s;
}
}  // namespace

Tokenizer::Tokenizer(TokenizerOptions options)
    : options_(std::move(options)), splitter_(split_options(options_)), index_word_(1, kNoWord) {}
Tokenizer::Tokenizer(const Tokenizer&) = default;
Tokenizer& Tokenizer::operator=(const Tokenizer&) = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

// word_index = dict(zip(sorted_voc, 1..)) with sorted_voc = [oov_token] + words stable-sorted by
// count, descending. A dict keeps the last value for a repeated key, hence the collision rule.
void Tokenizer::rebuild_index() {
  const std::int32_t n = vocab_.size();
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return counts_[a] > counts_[b]; });
  const std::int32_t first = options_.oov_token ? 2 : 1;
  index_of_.assign(static_cast<std::size_t>(n), 0);
  index_word_.assign(static_cast<std::size_t>(n + first), kNoWord);
  oov_index_ = 0;
  std::int32_t colliding = StringTable::kMissing;
  if (options_.oov_token) {
    index_word_[1] = kOovWord;
    oov_index_ = 1;
    colliding = vocab_.find(*options_.oov_token);
    if (colliding != StringTable::kMissing) index_word_[1] = kNoWord;  // overwritten: index 1 unused
  }
  for (std::int32_t rank = 0; rank < n; ++rank) {
    const std::int32_t id = order[static_cast<std::size_t>(rank)];
    const std::int32_t index = rank + first;
    index_of_[static_cast<std::size_t>(id)] = index;
    index_word_[static_cast<std::size_t>(index)] = id;
    if (id == colliding) oov_index_ = index;
  }
}

std::int32_t Tokenizer::emit_index(std::int32_t id, TransformStats& stats) const {
  ++stats.tokens;
  const std::int64_t num_words = options_.num_words.value_or(0);
  const std::int32_t index = id == StringTable::kMissing ? 0 : index_of_[static_cast<std::size_t>(id)];
  std::int32_t out = 0;
  if (index != 0) {
    if (num_words != 0 && index >= num_words) {
      ++stats.beyond_num_words;
      out = oov_index_;
    } else {
      out = index;
    }
  } else {
    ++stats.unknown;
    out = options_.oov_token ? oov_index_ : 0;
  }
  if (out != 0) ++stats.emitted;
  return out;
}

std::vector<std::string> Tokenizer::sequences_to_texts(const std::vector<Sequence>& sequences) const {
  const std::int64_t num_words = options_.num_words.value_or(0);
  const std::optional<std::string> oov_word = oov_index_ ? index_word(oov_index_) : std::nullopt;
  std::vector<std::string> out;
  out.reserve(sequences.size());
  for (const Sequence& seq : sequences) {
    std::string text;
    bool first = true;
    auto append = [&](std::string_view w) {
      if (!first) text += ' ';
      first = false;
      text.append(w);
    };
    for (const std::int32_t num : seq) {
      const std::optional<std::string> word = index_word(num);
      if (word) {
        if (num_words != 0 && num >= num_words) {
          if (oov_word) append(*oov_word);
        } else {
          append(*word);
        }
      } else if (options_.oov_token && oov_word) {
        append(*oov_word);
      }
    }
    out.push_back(std::move(text));
  }
  return out;
}

std::int64_t Tokenizer::word_count(std::string_view word) const {
  const std::int32_t id = vocab_.find(word);
  return id == StringTable::kMissing ? 0 : counts_[static_cast<std::size_t>(id)];
}

std::int64_t Tokenizer::word_docs(std::string_view word) const {
  const std::int32_t id = vocab_.find(word);
  return id == StringTable::kMissing ? 0 : docs_[static_cast<std::size_t>(id)];
}

std::optional<std::int32_t> Tokenizer::word_index(std::string_view word) const {
  const std::int32_t id = vocab_.find(word);
  if (id != StringTable::kMissing && index_of_[static_cast<std::size_t>(id)] != 0)
    return index_of_[static_cast<std::size_t>(id)];
  if (options_.oov_token && word == *options_.oov_token && oov_index_ != 0) return oov_index_;
  return std::nullopt;
}

std::optional<std::string> Tokenizer::index_word(std::int32_t index) const {
  if (index <= 0 || index >= static_cast<std::int32_t>(index_word_.size())) return std::nullopt;
  const std::int32_t entry = index_word_[static_cast<std::size_t>(index)];
  if (entry == kOovWord) return *options_.oov_token;
  if (entry == kNoWord) return std::nullopt;
  return std::string(vocab_.key(entry));
}

// ---------------------------------------------------------------------------------------------
// to_json / from_json: the format of keras_preprocessing's Tokenizer.to_json().

std::string Tokenizer::to_json() const {
  namespace pj = pyjson;
  const std::int32_t n = vocab_.size();
  std::string word_counts, word_docs, index_docs, index_word, word_index;
  {
    pj::DictWriter d(word_counts);
    for (std::int32_t i = 0; i < n; ++i) {
      d.key(vocab_.key(i));
      word_counts += std::to_string(counts_[static_cast<std::size_t>(i)]);
    }
    d.close();
  }
  {
    pj::DictWriter wd(word_docs), id(index_docs);
    for (std::int32_t i = 0; i < n; ++i) {
      const std::int64_t docs = docs_[static_cast<std::size_t>(i)];
      if (docs == 0) continue;  // word_docs only holds words that occurred in a document
      wd.key(vocab_.key(i));
      word_docs += std::to_string(docs);
      const std::int32_t index = index_of_[static_cast<std::size_t>(i)];
      if (index == 0) continue;
      id.key(index);
      index_docs += std::to_string(docs);
    }
    wd.close();
    id.close();
  }
  {
    pj::DictWriter iw(index_word), wi(word_index);
    if (options_.oov_token && oov_index_ != 0) {
      wi.key(*options_.oov_token);
      word_index += std::to_string(oov_index_);
    }
    for (std::int32_t index = 1; index < static_cast<std::int32_t>(index_word_.size()); ++index) {
      const std::optional<std::string> w = this->index_word(index);
      if (!w) continue;
      iw.key(index);
      pj::append_string(index_word, *w);
      const bool is_oov_key = options_.oov_token && *w == *options_.oov_token;
      if (!is_oov_key) {
        wi.key(*w);
        word_index += std::to_string(index);
      }
    }
    iw.close();
    wi.close();
  }
  std::string out;
  pj::DictWriter top(out);
  top.key("class_name");
  pj::append_string(out, "Tokenizer");
  top.key("config");
  pj::DictWriter cfg(out);
  cfg.key("num_words");
  out += options_.num_words ? std::to_string(*options_.num_words) : "null";
  cfg.key("filters");
  pj::append_string(out, options_.filters);
  cfg.key("lower");
  out += options_.lower ? "true" : "false";
  cfg.key("split");
  pj::append_string(out, options_.split);
  cfg.key("char_level");
  out += options_.char_level ? "true" : "false";
  cfg.key("oov_token");
  if (options_.oov_token)
    pj::append_string(out, *options_.oov_token);
  else
    out += "null";
  cfg.key("document_count");
  out += std::to_string(document_count_);
  const std::pair<const char*, const std::string*> tables[] = {{"word_counts", &word_counts},
                                                               {"word_docs", &word_docs},
                                                               {"index_docs", &index_docs},
                                                               {"index_word", &index_word},
                                                               {"word_index", &word_index}};
  for (const auto& [name, table] : tables) {
    cfg.key(name);
    pj::append_string(out, *table);
  }
  cfg.close();
  top.close();
  return out;
}

namespace {

using ojson = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& source, const std::string& key, const std::string& what) {
  throw std::runtime_error(source + ": " + key + ": " + what);
}

const ojson& member(const ojson& obj, const char* key, const std::string& source, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(source, where + key, "missing");
  return *it;
}

/// One entry of a flat JSON object.
struct Entry {
  std::string key;
  ojson value;  // a scalar
};

/// Collects a flat object's entries in file order with nlohmann's SAX interface. (A DOM would not
/// do: ordered_json finds keys by linear search, quadratic for a 200k-word table.)
class FlatObjectReader : public nlohmann::json_sax<ojson> {
 public:
  std::vector<Entry> entries;
  std::string error;

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t& v) override { return scalar(std::move(v)); }
  bool binary(binary_t&) override { return fail("unexpected binary value"); }
  bool start_object(std::size_t) override { return ++depth_ == 1 ? true : fail("expected a flat object"); }
  bool key(string_t& k) override {
    entries.push_back(Entry{std::move(k), ojson()});
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return fail("expected a flat object, found an array"); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override { return fail(e.what()); }

 private:
  template <class T>
  bool scalar(T&& v) {
    if (depth_ != 1 || entries.empty()) return fail("expected a JSON object");
    entries.back().value = ojson(std::forward<T>(v));
    return true;
  }
  bool fail(const std::string& why) {
    if (error.empty()) error = why;
    return false;
  }
  int depth_ = 0;
};

/// Parses a double-encoded table: a JSON string whose content is a flat JSON object.
std::vector<Entry> inner_table(const ojson& cfg, const char* key, const std::string& source) {
  const ojson& v = member(cfg, key, source, "config.");
  if (!v.is_string()) bad(source, std::string("config.") + key, "expected a string holding a JSON object");
  FlatObjectReader reader;
  if (!ojson::sax_parse(v.get_ref<const std::string&>(), &reader) || !reader.error.empty())
    bad(source, std::string("config.") + key, "not a JSON object of words: " + reader.error);
  return std::move(reader.entries);
}

std::int64_t int_value(const ojson& v, const std::string& source, const std::string& key) {
  if (!v.is_number_integer()) bad(source, key, "expected an integer, got " + v.dump());
  return v.get<std::int64_t>();
}

std::int32_t int_key(const std::string& k, const std::string& source, const std::string& table) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(k, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != k.size() || k.empty() || value < 1 || value > INT32_MAX)
    bad(source, "config." + table, "key '" + k + "' is not a positive integer");
  return static_cast<std::int32_t>(value);
}

}  // namespace

Tokenizer Tokenizer::from_json(std::string_view json, const std::string& source) {
  ojson doc;
  try {
    doc = ojson::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(source + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) bad(source, "(top level)", "expected an object");
  if (doc.contains("class_name") && doc["class_name"] != "Tokenizer")
    bad(source, "class_name", "expected \"Tokenizer\", got " + doc["class_name"].dump());
  const ojson& cfg = member(doc, "config", source, "");
  if (!cfg.is_object()) bad(source, "config", "expected an object");

  TokenizerOptions opt;
  const ojson& num_words = member(cfg, "num_words", source, "config.");
  if (!num_words.is_null()) opt.num_words = int_value(num_words, source, "config.num_words");
  auto str = [&](const char* key) {
    const ojson& v = member(cfg, key, source, "config.");
    if (!v.is_string()) bad(source, std::string("config.") + key, "expected a string");
    return v.get<std::string>();
  };
  auto boolean = [&](const char* key) {
    const ojson& v = member(cfg, key, source, "config.");
    if (!v.is_boolean()) bad(source, std::string("config.") + key, "expected true or false");
    return v.get<bool>();
  };
  opt.filters = str("filters");
  opt.lower = boolean("lower");
  opt.split = str("split");
  opt.char_level = boolean("char_level");
  const ojson& oov = member(cfg, "oov_token", source, "config.");
  if (!oov.is_null()) {
    if (!oov.is_string()) bad(source, "config.oov_token", "expected a string or null");
    opt.oov_token = oov.get<std::string>();
  }
  if (opt.split.empty()) bad(source, "config.split", "must not be empty");
  Tokenizer t(std::move(opt));
  t.document_count_ = cfg.contains("document_count") ? int_value(cfg["document_count"], source, "config.document_count") : 0;

  for (const auto& [word, count] : inner_table(cfg, "word_counts", source)) {
    const std::int32_t id = t.vocab_.intern(word);
    if (id != static_cast<std::int32_t>(t.counts_.size())) bad(source, "config.word_counts", "repeated word '" + word + "'");
    t.counts_.push_back(int_value(count, source, "config.word_counts['" + word + "']"));
    t.docs_.push_back(0);
  }
  for (const auto& [word, docs] : inner_table(cfg, "word_docs", source)) {
    const std::int32_t id = t.vocab_.find(word);
    if (id == StringTable::kMissing) bad(source, "config.word_docs", "word '" + word + "' is not in word_counts");
    t.docs_[static_cast<std::size_t>(id)] = int_value(docs, source, "config.word_docs['" + word + "']");
  }
  inner_table(cfg, "index_docs", source);  // derived from word_docs and word_index; checked for form only

  // word_index is what texts_to_sequences reads; index_word what sequences_to_texts reads.
  t.index_of_.assign(static_cast<std::size_t>(t.vocab_.size()), 0);
  for (const auto& [word, value] : inner_table(cfg, "word_index", source)) {
    const std::int64_t index = int_value(value, source, "config.word_index['" + word + "']");
    if (index < 1 || index > INT32_MAX) bad(source, "config.word_index['" + word + "']", "index must be >= 1");
    const std::int32_t id = t.vocab_.find(word);
    if (id != StringTable::kMissing) {
      t.index_of_[static_cast<std::size_t>(id)] = static_cast<std::int32_t>(index);
    } else if (!(t.options_.oov_token && word == *t.options_.oov_token)) {
      bad(source, "config.word_index", "word '" + word + "' is neither in word_counts nor the oov_token");
    }
    if (t.options_.oov_token && word == *t.options_.oov_token) t.oov_index_ = static_cast<std::int32_t>(index);
  }
  const std::vector<Entry> index_word = inner_table(cfg, "index_word", source);
  std::int32_t max_index = 0;
  for (const auto& [key, value] : index_word) max_index = std::max(max_index, int_key(key, source, "index_word"));
  t.index_word_.assign(static_cast<std::size_t>(max_index) + 1, kNoWord);
  for (const auto& [key, value] : index_word) {
    const std::int32_t index = int_key(key, source, "index_word");
    if (!value.is_string()) bad(source, "config.index_word['" + key + "']", "expected a string");
    const std::string word = value.get<std::string>();
    const std::int32_t id = t.vocab_.find(word);
    if (id != StringTable::kMissing)
      t.index_word_[static_cast<std::size_t>(index)] = id;
    else if (t.options_.oov_token && word == *t.options_.oov_token)
      t.index_word_[static_cast<std::size_t>(index)] = kOovWord;
    else
      bad(source, "config.index_word['" + key + "']", "word '" + word + "' is neither in word_counts nor the oov_token");
  }
  return t;
}

}  // namespace attn::text
