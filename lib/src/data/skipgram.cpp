// Skip-gram with negative sampling and fastText's subwords (see skipgram.h).
#include "attn/data/skipgram.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "attn/io/atomic_file.h"
#include "attn/text/csv.h"
#include "attn/text/subwords.h"
#include "attn/text/threads.h"
#include "attn/text/tokenizer.h"
#include "attn/text/unicode.h"

namespace attn::data {
namespace {

/// fastText's table size for drawing negatives (each word appears count^0.5 times, shuffled).
constexpr std::size_t kNegativeTable = 10'000'000;

struct Corpus {
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  std::vector<std::vector<std::int32_t>> texts;  ///< each text's words of min_count, as indices
  std::int64_t tokens = 0;
};

Corpus read_corpus(const std::vector<std::string>& texts, std::int64_t min_count) {
  const text::Tokenizer splitter;  // Keras' word splitting: lowercase, its filters, spaces
  std::vector<std::vector<std::string>> split;
  split.reserve(texts.size());
  std::unordered_map<std::string, std::int64_t> counts;
  Corpus c;
  for (const std::string& t : texts) {
    split.push_back(splitter.tokenize(t));
    for (const std::string& w : split.back()) ++counts[w];
    c.tokens += static_cast<std::int64_t>(split.back().size());
  }
  std::vector<std::pair<std::string, std::int64_t>> kept;
  for (auto& [w, n] : counts)
    if (n >= min_count) kept.emplace_back(w, n);
  // most frequent first, ties by the word (the same order on every run)
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  std::unordered_map<std::string, std::int32_t> index;
  for (auto& [w, n] : kept) {
    index.emplace(w, static_cast<std::int32_t>(c.words.size()));
    c.words.push_back(w);
    c.counts.push_back(n);
  }
  for (const auto& words : split) {
    std::vector<std::int32_t> ids;
    for (const std::string& w : words)
      if (const auto it = index.find(w); it != index.end()) ids.push_back(it->second);
    if (ids.size() >= 2) c.texts.push_back(std::move(ids));
  }
  return c;
}

void check(const SkipgramOptions& o) {
  const auto positive = [](std::int64_t v, const char* name) {
    if (v < 1) throw std::invalid_argument(std::string("embed: --") + name + " must be >= 1, got " + std::to_string(v));
  };
  positive(o.dim, "dim");
  positive(o.epochs, "epochs");
  positive(o.window, "window");
  positive(o.negatives, "negatives");
  positive(o.min_count, "min-count");
  positive(o.threads, "threads");
  if (o.buckets < 0 || o.buckets > (std::int64_t{1} << 30)) throw std::invalid_argument("embed: --buckets must be in 0..2^30");
  if (!(o.lr > 0 && o.lr < 10)) throw std::invalid_argument("embed: --lr must be in (0, 10)");
  if (!(o.sample > 0)) throw std::invalid_argument("embed: --sample must be > 0");
}

/// The shared state of a training run; each thread trains on its share of the texts.
class Trainer {
 public:
  Trainer(const Corpus& corpus, const SkipgramOptions& o, SkipgramVectors& out)
      : c_(corpus), o_(o), in_(out.input), words_(static_cast<std::int64_t>(corpus.words.size())) {
    const std::int64_t rows = words_ + o.buckets;
    std::mt19937_64 rng(o.seed);
    std::uniform_real_distribution<float> init(-1.0f / static_cast<float>(o.dim), 1.0f / static_cast<float>(o.dim));
    in_.resize(static_cast<std::size_t>(rows * o.dim));
    for (float& v : in_) v = init(rng);
    out_.assign(static_cast<std::size_t>(words_ * o.dim), 0.0f);
    rows_.resize(static_cast<std::size_t>(words_));
    for (std::int64_t w = 0; w < words_; ++w) {
      rows_[static_cast<std::size_t>(w)].push_back(static_cast<std::int32_t>(w));
      if (o.buckets > 0)
        for (std::int32_t r : text::subword_rows(corpus.words[static_cast<std::size_t>(w)], o.buckets, o.skeletons))
          rows_[static_cast<std::size_t>(w)].push_back(static_cast<std::int32_t>(words_ + r - 1));
    }
    double z = 0;
    for (std::int64_t n : corpus.counts) z += std::sqrt(static_cast<double>(n));
    for (std::int64_t w = 0; w < words_; ++w) {
      const auto share =
          static_cast<std::size_t>(std::sqrt(static_cast<double>(c_.counts[static_cast<std::size_t>(w)])) / z * kNegativeTable);
      negatives_.insert(negatives_.end(), std::max<std::size_t>(1, share), static_cast<std::int32_t>(w));
    }
    std::shuffle(negatives_.begin(), negatives_.end(), rng);
    std::int64_t kept = 0;
    for (std::int64_t n : corpus.counts) kept += n;
    for (std::int64_t n : corpus.counts) {
      const double f = static_cast<double>(n) / static_cast<double>(kept);
      keep_.push_back(std::sqrt(o.sample / f) + o.sample / f);
    }
    for (const auto& t : corpus.texts) total_ += static_cast<std::int64_t>(t.size());
    total_ *= o.epochs;
  }

  /// Thread `k` of `threads`: every epoch over texts k, k + threads, ...; returns its loss sum and predictions.
  std::pair<double, std::int64_t> run(int k) {
    std::mt19937_64 rng(o_.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(k) + 1);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<std::int64_t> span(1, o_.window);
    std::uniform_int_distribution<std::size_t> draw(0, negatives_.size() - 1);
    std::vector<float> hidden(static_cast<std::size_t>(o_.dim)), grad(static_cast<std::size_t>(o_.dim));
    std::vector<std::int32_t> line;
    double loss = 0;
    std::int64_t predictions = 0;
    for (std::int64_t epoch = 0; epoch < o_.epochs; ++epoch) {
      loss = 0;
      predictions = 0;
      for (std::size_t t = static_cast<std::size_t>(k); t < c_.texts.size(); t += static_cast<std::size_t>(o_.threads)) {
        const auto& text = c_.texts[t];
        const std::int64_t done = processed_.fetch_add(static_cast<std::int64_t>(text.size()), std::memory_order_relaxed);
        const auto lr = static_cast<float>(o_.lr * std::max(0.0, 1.0 - static_cast<double>(done) / static_cast<double>(total_)));
        line.clear();
        for (std::int32_t w : text)
          if (unit(rng) <= keep_[static_cast<std::size_t>(w)]) line.push_back(w);
        for (std::size_t i = 0; i < line.size(); ++i) {
          const auto b = static_cast<std::size_t>(span(rng));
          const std::vector<std::int32_t>& rows = rows_[static_cast<std::size_t>(line[i])];
          for (std::size_t j = i >= b ? i - b : 0; j <= i + b && j < line.size(); ++j) {
            if (j == i) continue;
            loss += update(rows, line[j], lr, hidden, grad, rng, draw);
            ++predictions;
          }
        }
      }
    }
    return {loss, predictions};
  }

 private:
  /// One prediction: the word of `rows` predicts `target` against o.negatives drawn words; returns its loss.
  template <class Rng, class Draw>
  double update(const std::vector<std::int32_t>& rows, std::int32_t target, float lr, std::vector<float>& hidden, std::vector<float>& grad,
                Rng& rng, Draw& draw) {
    const std::int64_t d = o_.dim;
    std::fill(hidden.begin(), hidden.end(), 0.0f);
    for (std::int32_t r : rows) {
      const float* v = in_.data() + static_cast<std::int64_t>(r) * d;
      for (std::int64_t i = 0; i < d; ++i) hidden[static_cast<std::size_t>(i)] += v[i];
    }
    const float scale = 1.0f / static_cast<float>(rows.size());
    for (float& h : hidden) h *= scale;
    std::fill(grad.begin(), grad.end(), 0.0f);
    double loss = 0;
    for (std::int64_t n = 0; n <= o_.negatives; ++n) {
      std::int32_t word = target;
      if (n > 0) {
        do word = negatives_[draw(rng)];
        while (word == target);
      }
      float* out = out_.data() + static_cast<std::int64_t>(word) * d;
      float dot = 0;
      for (std::int64_t i = 0; i < d; ++i) dot += out[i] * hidden[static_cast<std::size_t>(i)];
      const float p = 1.0f / (1.0f + std::exp(-dot));  // sigmoid(out . hidden)
      const float label = n == 0 ? 1.0f : 0.0f;
      loss -= std::log(std::max(1e-7f, n == 0 ? p : 1.0f - p));  // -log sigmoid(+-out . hidden)
      const float alpha = lr * (label - p);
      for (std::int64_t i = 0; i < d; ++i) {
        grad[static_cast<std::size_t>(i)] += alpha * out[i];
        out[i] += alpha * hidden[static_cast<std::size_t>(i)];
      }
    }
    for (std::int32_t r : rows) {  // every input row takes the whole step (fastText, skip-gram)
      float* v = in_.data() + static_cast<std::int64_t>(r) * d;
      for (std::int64_t i = 0; i < d; ++i) v[i] += grad[static_cast<std::size_t>(i)];
    }
    return loss;
  }

  const Corpus& c_;
  const SkipgramOptions& o_;
  std::vector<float>& in_;
  std::vector<float> out_;
  std::int64_t words_;
  std::vector<std::vector<std::int32_t>> rows_;  ///< each word's input rows: its own, then its n-grams'
  std::vector<std::int32_t> negatives_;
  std::vector<double> keep_;
  std::int64_t total_ = 0;
  std::atomic<std::int64_t> processed_{0};
};

std::string row_text(const float* v, std::int64_t d) {
  std::string s;
  char buf[32];
  for (std::int64_t i = 0; i < d; ++i) {
    std::snprintf(buf, sizeof buf, " %.6g", static_cast<double>(v[i]));
    s += buf;
  }
  return s;
}

}  // namespace

std::vector<float> SkipgramVectors::vector(std::size_t word) const {
  const float* own = input.data() + static_cast<std::int64_t>(word) * dim;
  std::vector<float> v(own, own + dim);
  if (buckets > 0) {
    const std::vector<std::int32_t> rows = text::subword_rows(words.at(word), buckets, skeletons);
    for (std::int32_t r : rows) {
      const float* g = input.data() + (static_cast<std::int64_t>(words.size()) + r - 1) * dim;
      for (std::int64_t i = 0; i < dim; ++i) v[static_cast<std::size_t>(i)] += g[i];
    }
    for (float& x : v) x /= static_cast<float>(1 + rows.size());
  }
  return v;
}

SkipgramVectors train_skipgram(const std::vector<std::string>& texts, const SkipgramOptions& options) {
  check(options);
  const Corpus corpus = read_corpus(texts, options.min_count);
  if (corpus.words.empty() || corpus.texts.empty())
    throw std::invalid_argument("embed: no text has two words seen at least --min-count " + std::to_string(options.min_count) + " times");
  SkipgramVectors out;
  out.dim = options.dim;
  out.buckets = options.buckets;
  out.skeletons = options.skeletons;
  out.words = corpus.words;
  out.counts = corpus.counts;
  out.tokens = corpus.tokens;
  Trainer trainer(corpus, options, out);
  std::vector<std::pair<double, std::int64_t>> results(static_cast<std::size_t>(options.threads));
  text::on_threads(results.size(), [&](std::size_t k) { results[k] = trainer.run(static_cast<int>(k)); });
  double loss = 0;
  std::int64_t predictions = 0;
  for (const auto& [l, n] : results) {
    loss += l;
    predictions += n;
  }
  out.loss = predictions > 0 ? loss / static_cast<double>(predictions) : 0.0;
  return out;
}

void write_skipgram_vectors(const SkipgramVectors& v, const std::string& path) {
  std::string vec = std::to_string(v.words.size()) + " " + std::to_string(v.dim) + "\n";
  for (std::size_t w = 0; w < v.words.size(); ++w) {
    const std::vector<float> x = v.vector(w);
    vec += v.words[w] + row_text(x.data(), v.dim) + "\n";
  }
  io::StagedFiles files;
  files.add(path, vec);
  if (v.buckets > 0) {
    std::string rows = "attn-subwords " + std::to_string(v.words.size()) + " " + std::to_string(v.buckets) + " " + std::to_string(v.dim) +
                       " " + std::to_string(text::kSubwordMinN) + " " + std::to_string(text::kSubwordMaxN) + "\n";
    for (std::size_t w = 0; w < v.words.size(); ++w) rows += v.words[w] + row_text(v.input.data() + w * v.dim, v.dim) + "\n";
    for (std::int64_t b = 0; b < v.buckets; ++b)
      rows += row_text(v.input.data() + (static_cast<std::int64_t>(v.words.size()) + b) * v.dim, v.dim).substr(1) + "\n";
    files.add(path + ".subwords", rows);
  }
  files.commit();
}

WordVectors word_vectors_of(const SkipgramVectors& v, const std::unordered_set<std::string>& wanted) {
  WordVectors out;
  out.dim = v.dim;
  out.lines = static_cast<std::int64_t>(v.words.size());
  for (std::size_t w = 0; w < v.words.size(); ++w)
    if (wanted.count(v.words[w])) out.vectors.emplace(v.words[w], v.vector(w));
  return out;
}

SubwordRows subword_rows_of(const SkipgramVectors& v, const std::unordered_set<std::string>& wanted) {
  SubwordRows out;
  if (v.buckets == 0) return out;
  out.dim = v.dim;
  out.buckets = v.buckets;
  for (std::size_t w = 0; w < v.words.size(); ++w) {
    if (!wanted.count(v.words[w])) continue;
    const float* own = v.input.data() + static_cast<std::int64_t>(w) * v.dim;
    out.words.emplace(v.words[w], std::vector<float>(own, own + v.dim));
  }
  const float* first = v.input.data() + static_cast<std::int64_t>(v.words.size()) * v.dim;
  out.ngrams.assign(first, first + v.buckets * v.dim);
  return out;
}

SkipgramVectors embed_file(const EmbedRequest& r) {
  if (r.out.empty()) throw std::invalid_argument("embed: --out is required");
  // the output's directory first: a path that cannot be written fails before the work
  const std::filesystem::path parent = std::filesystem::path(r.out).parent_path();
  if (!parent.empty()) io::ensure_directory(parent.string());
  std::vector<std::string> texts;
  if (r.lines) {
    std::ifstream in(r.input, std::ios::binary);
    if (!in) throw std::runtime_error(r.input + ": cannot open");
    std::string line;
    std::int64_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (text::find_invalid_utf8(line) != std::string_view::npos)
        throw std::runtime_error(r.input + ":" + std::to_string(number) + ": not valid UTF-8");
      texts.push_back(std::move(line));
    }
  } else {
    text::CsvReader reader(r.input, text::parse_table_format(r.format, "--format"));
    const std::size_t c = reader.column(r.text_column);
    reader.require_string(c);
    text::CsvRecord record;
    while (reader.next(record)) texts.push_back(std::move(record.fields[c]));
  }
  SkipgramVectors v = train_skipgram(texts, r.options);
  write_skipgram_vectors(v, r.out);
  return v;
}

}  // namespace attn::data
