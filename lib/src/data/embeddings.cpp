#include "attn/data/embeddings.h"

#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "attn/text/unicode.h"

namespace attn::data {
namespace {

/// One line at a time from a plain or gzipped file (zlib reads both), of any length.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (!file_) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  ~LineReader() { gzclose(file_); }
  bool next(std::string& line) {
    line.clear();
    char buf[1 << 16];
    while (gzgets(file_, buf, sizeof buf)) {
      line += buf;
      if (!line.empty() && line.back() == '\n') break;
    }
    int err = 0;
    const char* message = gzerror(file_, &err);
    if (err != Z_OK && err != Z_STREAM_END) throw std::runtime_error(path_ + ": cannot read: " + message);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return !line.empty() || !gzeof(file_);
  }

 private:
  std::string path_;
  gzFile file_;
};

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool is_integer(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

/// The numbers f[first, first + dim) of line `number`, into `out`.
void read_values(const std::vector<std::string>& f, std::size_t first, std::int64_t dim, float* out, const std::string& path,
                 std::int64_t number) {
  if (static_cast<std::int64_t>(f.size() - first) != dim)
    throw std::runtime_error(path + ":" + std::to_string(number) + ": " + std::to_string(f.size() - first) + " values where the file has " +
                             std::to_string(dim));
  for (std::int64_t i = 0; i < dim; ++i) {
    const std::string& s = f[first + static_cast<std::size_t>(i)];
    char* end = nullptr;
    out[i] = std::strtof(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') throw std::runtime_error(path + ":" + std::to_string(number) + ": '" + s + "' is not a number");
  }
}

}  // namespace

WordVectors read_word_vectors(const std::string& path, const std::unordered_set<std::string>& wanted) {
  WordVectors out;
  LineReader reader(path);
  std::unordered_set<std::string> exact;  // wanted words found with their own spelling
  std::string line;
  std::int64_t number = 0;
  while (reader.next(line)) {
    ++number;
    const std::vector<std::string> f = fields_of(line);
    if (f.empty()) continue;
    if (number == 1 && f.size() == 2 && is_integer(f[0]) && is_integer(f[1])) {  // word2vec / fastText header
      out.dim = std::strtoll(f[1].c_str(), nullptr, 10);
      continue;
    }
    const auto dim = static_cast<std::int64_t>(f.size()) - 1;
    if (out.dim == 0) out.dim = dim;
    if (dim != out.dim)
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + std::to_string(dim) + " values where the file has " +
                               std::to_string(out.dim));
    ++out.lines;
    const std::string& word = f[0];
    std::string key;
    if (wanted.count(word) && !exact.count(word)) {
      key = word;
    } else {
      const std::string lower = text::python_lower(word);
      if (lower == word || !wanted.count(lower) || exact.count(lower) || out.vectors.count(lower)) continue;
      key = lower;
    }
    std::vector<float> v(static_cast<std::size_t>(dim));
    read_values(f, 1, dim, v.data(), path, number);
    if (key == word) {
      if (out.vectors.count(key)) --out.lowercase_matches;  // a case variant came first
      exact.insert(key);
    } else {
      ++out.lowercase_matches;
    }
    out.vectors[key] = std::move(v);
  }
  if (out.lines == 0) throw std::runtime_error(path + ": no word vectors");
  return out;
}

SubwordRows read_subword_rows(const std::string& path, const std::unordered_set<std::string>& wanted) {
  LineReader reader(path);
  std::string line;
  if (!reader.next(line)) throw std::runtime_error(path + ": empty (expected an 'attn-subwords' line)");
  const std::vector<std::string> head = fields_of(line);
  if (head.size() != 6 || head[0] != "attn-subwords" || !is_integer(head[1]) || !is_integer(head[2]) || !is_integer(head[3]) ||
      head[4] != "3" || head[5] != "6")
    throw std::runtime_error(path + ":1: expected 'attn-subwords WORDS BUCKETS DIM 3 6' (n-grams of 3 to 6 characters)");
  SubwordRows out;
  const std::int64_t words = std::strtoll(head[1].c_str(), nullptr, 10);
  out.buckets = std::strtoll(head[2].c_str(), nullptr, 10);
  out.dim = std::strtoll(head[3].c_str(), nullptr, 10);
  if (out.dim < 1 || out.buckets < 1 || out.buckets > (std::int64_t{1} << 30))
    throw std::runtime_error(path + ":1: dimension and buckets must be positive");
  out.ngrams.resize(static_cast<std::size_t>(out.buckets * out.dim));
  std::int64_t number = 1;
  for (std::int64_t i = 0; i < words + out.buckets; ++i) {
    if (!reader.next(line))
      throw std::runtime_error(path + ": ends at line " + std::to_string(number) + " of " + std::to_string(1 + words + out.buckets));
    ++number;
    const std::vector<std::string> f = fields_of(line);
    if (i < words) {
      if (f.empty() || !wanted.count(f[0])) continue;
      std::vector<float>& v = out.words[f[0]];
      v.resize(static_cast<std::size_t>(out.dim));
      read_values(f, 1, out.dim, v.data(), path, number);
    } else {
      read_values(f, 0, out.dim, out.ngrams.data() + (i - words) * out.dim, path, number);
    }
  }
  return out;
}

}  // namespace attn::data
