#include "attn/text/tokenizer.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "attn/text/python_json.h"
#include "attn/text/subwords.h"
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
  s.deobfuscate = o.deobfuscate;
  return s;
}

// ---- to_json's parts: Keras' layout, the tables each a dict already dumped to a JSON string ----

/// The config's settings, num_words to document_count.
void write_settings(std::string& out, pyjson::DictWriter& cfg, const TokenizerOptions& o, std::int64_t document_count) {
  cfg.key("num_words");
  out += o.num_words ? std::to_string(*o.num_words) : "null";
  cfg.key("filters");
  pyjson::append_string(out, o.filters);
  cfg.key("lower");
  out += o.lower ? "true" : "false";
  cfg.key("split");
  pyjson::append_string(out, o.split);
  cfg.key("char_level");
  out += o.char_level ? "true" : "false";
  cfg.key("oov_token");
  if (o.oov_token)
    pyjson::append_string(out, *o.oov_token);
  else
    out += "null";
  cfg.key("document_count");
  out += std::to_string(document_count);
}

/// word_counts; word_docs (only the words that occurred in a document); index_docs (in the same
/// order, by index).
void write_count_tables(std::string& out, pyjson::DictWriter& cfg, const StringTable& vocab, const std::vector<std::int64_t>& counts,
                        const std::vector<std::int64_t>& docs, const std::vector<std::int32_t>& index_of) {
  const std::int32_t n = vocab.size();
  // One nested dict: for each word i that `keep(i)`, its key and number.
  const auto table = [&](const char* name, const auto& key, const std::vector<std::int64_t>& number, const auto& keep) {
    cfg.key(name);
    pyjson::NestedDictWriter d(out);
    for (std::int32_t i = 0; i < n; ++i) {
      if (!keep(static_cast<std::size_t>(i))) continue;
      d.key(key(i));
      d.number(number[static_cast<std::size_t>(i)]);
    }
    d.close();
  };
  const auto word = [&](std::int32_t i) { return vocab.key(i); };
  table("word_counts", word, counts, [](std::size_t) { return true; });
  table("word_docs", word, docs, [&](std::size_t i) { return docs[i] != 0; });
  table(
      "index_docs", [&](std::int32_t i) { return index_of[static_cast<std::size_t>(i)]; }, docs,
      [&](std::size_t i) { return docs[i] != 0 && index_of[i] != 0; });
}

/// index_word, then word_index (the OOV token first, then by index; a word equal to the token only
/// there), from `word_at(index)`: the index's word, or none.
template <class WordAt>
void write_index_tables(std::string& out, pyjson::DictWriter& cfg, std::int32_t indices, const WordAt& word_at,
                        const std::optional<std::string>& oov_token, std::int32_t oov_index) {
  cfg.key("index_word");
  {
    pyjson::NestedDictWriter d(out);
    for (std::int32_t index = 1; index < indices; ++index) {
      if (const auto w = word_at(index)) {
        d.key(index);
        d.string_value(*w);
      }
    }
    d.close();
  }
  cfg.key("word_index");
  {
    pyjson::NestedDictWriter d(out);
    if (oov_token && oov_index != 0) {
      d.key(*oov_token);
      d.number(oov_index);
    }
    for (std::int32_t index = 1; index < indices; ++index) {
      const auto w = word_at(index);
      if (!w || (oov_token && *w == *oov_token)) continue;
      d.key(*w);
      d.number(index);
    }
    d.close();
  }
}

}  // namespace

Tokenizer::Tokenizer(TokenizerOptions options)
    : options_(std::move(options)), splitter_(split_options(options_)), index_word_(1, kNoWord) {}
Tokenizer::Tokenizer(const Tokenizer&) = default;

void Tokenizer::read_deobfuscated(bool on) {
  options_.deobfuscate = on;
  splitter_ = WordSplitter(split_options(options_));
  index_skeletons();
}

std::vector<std::string> Tokenizer::tokenize(std::string_view text) const {
  const std::optional<KnownWords> known = known_words();
  WordSplitter::Scratch scratch;
  std::vector<std::string_view> views;
  splitter_.split(text, scratch, views, known ? &*known : nullptr);
  return std::vector<std::string>(views.begin(), views.end());
}

std::optional<KnownWords> Tokenizer::known_words() const {
  if (!options_.deobfuscate || options_.char_level || index_word_.size() <= 1 || !skeletons_) return std::nullopt;
  const std::int64_t num_words = options_.num_words.value_or(0);
  KnownWords known;
  known.rank = [this, num_words](std::string_view word) -> std::optional<std::int32_t> {
    const std::int32_t id = vocab_.find(word);
    if (id == StringTable::kMissing) return std::nullopt;
    const std::int32_t index = index_of_[static_cast<std::size_t>(id)];
    if (index == 0 || index == oov_index_ || (num_words != 0 && index >= num_words)) return std::nullopt;
    return index;
  };
  known.with_skeleton = [this](std::string_view skeleton) -> std::optional<std::string_view> {
    const auto it = skeletons_->find(std::string(skeleton));
    if (it == skeletons_->end()) return std::nullopt;
    return vocab_.key(index_word_[static_cast<std::size_t>(it->second)]);
  };
  return known;
}

void Tokenizer::index_skeletons() {
  skeletons_.reset();
  if (!options_.deobfuscate || options_.char_level) return;
  auto skeletons = std::make_shared<std::unordered_map<std::string, std::int32_t>>();
  const std::int64_t num_words = options_.num_words.value_or(0);
  const auto end = static_cast<std::int32_t>(num_words != 0 ? std::min<std::int64_t>(num_words, index_limit()) : index_limit());
  for (std::int32_t index = 1; index < end; ++index) {  // most frequent first: the first word with a skeleton keeps it
    const std::int32_t id = index_word_[static_cast<std::size_t>(index)];
    if (id < 0 || index == oov_index_) continue;  // the OOV token, or no word
    const std::string skeleton = consonant_skeleton(vocab_.key(id));
    if (skeleton.size() >= 3) skeletons->emplace(skeleton, index);
  }
  skeletons_ = std::move(skeletons);
}

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
  index_skeletons();
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

void Tokenizer::require_all_tables(const char* what) const {
  if (tables_ != TokenizerTables::kAll)
    throw std::logic_error(std::string(what) +
                           " needs the tokenizer's word counts, which were not loaded (TokenizerTables::kForTransform)");
}

std::int64_t Tokenizer::word_count(std::string_view word) const {
  require_all_tables("word_count");
  const std::int32_t id = vocab_.find(word);
  return id == StringTable::kMissing ? 0 : counts_[static_cast<std::size_t>(id)];
}

std::int64_t Tokenizer::word_docs(std::string_view word) const {
  require_all_tables("word_docs");
  const std::int32_t id = vocab_.find(word);
  return id == StringTable::kMissing ? 0 : docs_[static_cast<std::size_t>(id)];
}

std::optional<std::int32_t> Tokenizer::word_index(std::string_view word) const {
  const std::int32_t id = vocab_.find(word);
  if (id != StringTable::kMissing && index_of_[static_cast<std::size_t>(id)] != 0) return index_of_[static_cast<std::size_t>(id)];
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
  require_all_tables("to_json");
  const std::int32_t n = vocab_.size();
  // Room for it all up front (a 220k-word vocabulary makes 25 MB of JSON): no regrowing.
  std::size_t key_bytes = 0;
  for (std::int32_t i = 0; i < n; ++i) key_bytes += vocab_.key(i).size();
  std::string out;
  out.reserve(5 * (key_bytes + static_cast<std::size_t>(n) * 20) + 4096);
  pyjson::DictWriter top(out);
  top.key("class_name");
  pyjson::append_string(out, "Tokenizer");
  top.key("config");
  pyjson::DictWriter cfg(out);
  write_settings(out, cfg, options_, document_count_);
  write_count_tables(out, cfg, vocab_, counts_, docs_, index_of_);
  // index -> its word: a vocabulary word, the OOV token, or none.
  const auto word_at = [&](std::int32_t index) -> std::optional<std::string_view> {
    const std::int32_t entry = index_word_[static_cast<std::size_t>(index)];
    if (entry == kOovWord) return std::string_view(*options_.oov_token);
    if (entry == kNoWord) return std::nullopt;
    return vocab_.key(entry);
  };
  write_index_tables(out, cfg, static_cast<std::int32_t>(index_word_.size()), word_at, options_.oov_token, oov_index_);
  cfg.close();
  top.close();
  return out;
}

}  // namespace attn::text
