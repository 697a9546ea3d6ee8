// The tokenizer's parallel engine: blocks of texts are tokenised by worker threads as they arrive;
// fitting then merges the workers' vocabularies in first-seen order. Everything that fits or
// transforms many texts (fit_on_texts, fit_transform, texts_to_sequences, attn prepare) runs here.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "attn/text/threads.h"
#include "attn/text/tokenizer.h"

namespace attn::text {
namespace {

constexpr std::size_t kBlockTexts = 2048;  // texts per block when the caller passes one big vector

/// Where a word first occurred: (text number, token number). Orders a fit's new words.
struct FirstSeen {
  std::int64_t text = 0, token = 0;
  bool operator<(const FirstSeen& o) const { return text != o.text ? text < o.text : token < o.token; }
};

}  // namespace

struct Tokenizer::Stream::Impl {
  Tokenizer* fitting = nullptr;  // set for fit streams
  bool reread = false;           // a fit stream reading deobfuscated that returns sequences: its texts are read again, once fitted
  const Tokenizer* tokenizer = nullptr;
  std::size_t threads = 1;

  struct Block {
    std::vector<std::string> owned;
    const std::string* texts = nullptr;  // owned.data() (a move keeps it), or the caller's; or none and
    PackedTexts packed;                  // the texts are here
    std::string_view text(std::size_t k) const { return texts ? std::string_view(texts[k]) : packed[k]; }
    std::size_t count = 0;
    std::int64_t first_text = 0;  // number of texts[0] in the stream
    std::size_t worker = 0;
    std::vector<std::int32_t> tokens;   // worker-local word ids (fit) or emitted indices (transform)
    std::vector<std::int64_t> lengths;  // tokens per text
  };
  // What a worker learns while fitting: its own table, in the order it met the words.
  struct WordStat {
    std::int64_t count = 0, docs = 0, last_text = -1;
    FirstSeen first;
  };
  struct Worker {
    StringTable words;
    std::vector<WordStat> stats;
    TransformStats transform;
    std::vector<std::int32_t> emit;  // local id -> emitted index, after the merge
  };

  std::deque<Block> blocks;  // a deque keeps references valid while blocks are added
  std::vector<Worker> workers;
  std::vector<std::thread> pool;
  std::mutex mutex;
  std::condition_variable ready;
  std::size_t next_block = 0;
  bool closed = false;
  std::int64_t texts_added = 0;
  std::exception_ptr error;

  void start() {
    workers.resize(threads);
    for (std::size_t w = 0; w < threads; ++w) pool.emplace_back([this, w] { run(w); });
  }

  void add(Block block) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (closed) throw std::logic_error("Tokenizer::Stream: add() after finish()");
      block.first_text = texts_added;
      texts_added += static_cast<std::int64_t>(block.count);
      blocks.push_back(std::move(block));
    }
    ready.notify_one();
  }

  void run(std::size_t w) {
    try {
      while (true) {
        Block* b;
        {
          std::unique_lock<std::mutex> lock(mutex);
          ready.wait(lock, [&] { return next_block < blocks.size() || closed; });
          if (next_block == blocks.size()) return;
          b = &blocks[next_block++];
        }
        b->worker = w;
        tokenize(*b, workers[w]);
        if (!reread) {  // the texts are not needed any more
          std::vector<std::string>().swap(b->owned);
          b->packed = PackedTexts();
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
    }
  }

  /// Tokenises block `b` as the stream does: fitting into w's table, or applying the tokenizer.
  void tokenize(Block& b, Worker& w) { tokenize(b, fitting ? &w : nullptr, w.transform); }
  /// Tokenises block `b`: fitting into `fit`'s table, or (fit null) applying the fitted tokenizer,
  /// with its vocabulary when reading deobfuscated (counted in `stats`).
  void tokenize(Block& b, Worker* fit, TransformStats& stats) {
    WordSplitter::Scratch scratch;
    std::vector<std::string_view> words;
    std::vector<StringTable::Probe> probes;
    const std::optional<KnownWords> known = fit ? std::nullopt : tokenizer->known_words();
    b.lengths.reserve(b.count);
    for (std::size_t k = 0; k < b.count; ++k) {
      const std::int64_t text = b.first_text + static_cast<std::int64_t>(k);
      // Split the whole text, then look its words up with their table slots prefetched.
      words.clear();
      tokenizer->splitter_.split(b.text(k), scratch, words, known ? &*known : nullptr);
      probes.resize(words.size());
      const StringTable& table = fit ? fit->words : tokenizer->vocab_;
      for (std::size_t t = 0; t < words.size(); ++t) {
        probes[t] = StringTable::probe_of(words[t]);
        table.prefetch(probes[t]);
      }
      const std::size_t before = b.tokens.size();
      for (std::size_t t = 0; t < words.size(); ++t) {
        if (fit) {
          const std::int32_t id = fit->words.intern(words[t], probes[t]);
          if (id == static_cast<std::int32_t>(fit->stats.size()))
            fit->stats.push_back(WordStat{0, 0, -1, FirstSeen{text, static_cast<std::int64_t>(t)}});
          WordStat& st = fit->stats[static_cast<std::size_t>(id)];
          ++st.count;
          if (st.last_text != text) {
            st.last_text = text;
            ++st.docs;
          }
          b.tokens.push_back(id);
        } else {
          const std::int32_t index = tokenizer->emit_index(tokenizer->vocab_.find(words[t], probes[t]), stats);
          if (index != 0) b.tokens.push_back(index);
        }
      }
      b.lengths.push_back(static_cast<std::int64_t>(b.tokens.size() - before));
    }
  }

  /// Fitting: folds the workers' tables into the tokenizer. Words it already knew keep their
  /// place; new words are appended in the order they first occurred in this stream. Each worker's
  /// table is already in its own first-seen order, so a k-way merge on FirstSeen visits every
  /// word in stream order and interning it then gives new words their ids in the right order.
  void merge() {
    Tokenizer& t = *fitting;
    std::vector<std::vector<std::int32_t>> to_vocab(workers.size());
    std::vector<std::size_t> next(workers.size(), 0);
    std::size_t total = 0;
    for (std::size_t w = 0; w < workers.size(); ++w) {
      to_vocab[w].resize(workers[w].stats.size());
      total += workers[w].stats.size();
    }
    t.vocab_.reserve(total);
    // The stream order first (worker, local id), then the interning, with the table slots of the
    // words a little ahead prefetched (the table is larger than the caches).
    std::vector<std::pair<std::uint32_t, std::int32_t>> order;
    order.reserve(total);
    while (true) {
      std::size_t best = workers.size();
      for (std::size_t w = 0; w < workers.size(); ++w)
        if (next[w] < workers[w].stats.size() &&
            (best == workers.size() || workers[w].stats[next[w]].first < workers[best].stats[next[best]].first))
          best = w;
      if (best == workers.size()) break;
      order.emplace_back(static_cast<std::uint32_t>(best), static_cast<std::int32_t>(next[best]++));
    }
    t.vocab_.intern_each(
        order.size(), [&](std::size_t i) { return workers[order[i].first].words.key(order[i].second); },
        [&](std::size_t i, std::int32_t gid) {
          const std::size_t w = order[i].first;
          const std::size_t lid = static_cast<std::size_t>(order[i].second);
          const WordStat& st = workers[w].stats[lid];
          if (gid == static_cast<std::int32_t>(t.counts_.size())) {
            t.counts_.push_back(0);
            t.docs_.push_back(0);
          }
          t.counts_[static_cast<std::size_t>(gid)] += st.count;
          t.docs_[static_cast<std::size_t>(gid)] += st.docs;
          to_vocab[w][lid] = gid;
        });
    t.document_count_ += texts_added;
    t.rebuild_index();
    // Each worker's local id -> emitted index; every occurrence of a word is decided alike, so
    // the token accounting follows from the counts.
    for (std::size_t w = 0; w < workers.size(); ++w) {
      Worker& wk = workers[w];
      wk.emit.resize(wk.stats.size());
      for (std::size_t lid = 0; lid < wk.stats.size(); ++lid) {
        TransformStats one;
        wk.emit[lid] = t.emit_index(to_vocab[w][lid], one);
        const std::int64_t n = wk.stats[lid].count;
        wk.transform.tokens += n * one.tokens;
        wk.transform.beyond_num_words += n * one.beyond_num_words;
        wk.transform.unknown += n * one.unknown;
        wk.transform.emitted += n * one.emitted;
      }
    }
  }

  SequenceBatch finish(TransformStats* stats, const std::function<void()>& fitted) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      closed = true;
    }
    ready.notify_all();
    for (auto& th : pool) th.join();
    pool.clear();
    if (error) std::rethrow_exception(error);
    if (fitting && reread) {
      // Read deobfuscated, the texts are read again with the fitted vocabulary (known_words): what
      // fit_on_texts then texts_to_sequences gives.
      merge();
      if (fitted) fitted();
      std::vector<TransformStats> per_block(blocks.size());
      on_ranges(blocks.size(), threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          Block& b = blocks[i];
          b.tokens.clear();
          b.lengths.clear();
          tokenize(b, nullptr, per_block[i]);
        }
      });
      for (Worker& w : workers) w.transform = TransformStats();
      for (std::size_t i = 0; i < blocks.size(); ++i) workers.front().transform += per_block[i];
    } else if (fitting) {
      merge();
      if (fitted) fitted();
      // Local ids -> emitted indices, dropping zeros, block by block in parallel.
      on_ranges(blocks.size(), threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          Block& b = blocks[i];
          const std::vector<std::int32_t>& emit = workers[b.worker].emit;
          std::size_t from = 0, to = 0;
          for (std::int64_t& len : b.lengths) {
            const std::size_t row_start = to;
            for (std::int64_t k = 0; k < len; ++k) {
              const std::int32_t index = emit[static_cast<std::size_t>(b.tokens[from++])];
              if (index != 0) b.tokens[to++] = index;
            }
            len = static_cast<std::int64_t>(to - row_start);
          }
          b.tokens.resize(to);
        }
      });
    }
    if (stats)
      for (const Worker& w : workers) *stats += w.transform;
    // Concatenate the blocks in order.
    SequenceBatch out;
    std::vector<std::size_t> token_start(blocks.size() + 1, 0), text_start(blocks.size() + 1, 0);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      token_start[i + 1] = token_start[i] + blocks[i].tokens.size();
      text_start[i + 1] = text_start[i] + blocks[i].lengths.size();
    }
    out.ids.resize(token_start.back());
    out.offsets.resize(text_start.back() + 1);
    on_ranges(blocks.size(), threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        Block& b = blocks[i];
        std::copy(b.tokens.begin(), b.tokens.end(), out.ids.begin() + static_cast<std::ptrdiff_t>(token_start[i]));
        std::int64_t at = static_cast<std::int64_t>(token_start[i]);
        for (std::size_t k = 0; k < b.lengths.size(); ++k) {
          out.offsets[text_start[i] + k] = at;
          at += b.lengths[k];
        }
        std::vector<std::int32_t>().swap(b.tokens);
      }
    });
    out.offsets.back() = static_cast<std::int64_t>(out.ids.size());
    blocks.clear();
    return out;
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      closed = true;
    }
    ready.notify_all();
    for (auto& th : pool) th.join();
  }
};

Tokenizer::Stream::Stream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Stream::Stream(Stream&&) noexcept = default;
Tokenizer::Stream::~Stream() = default;

void Tokenizer::Stream::add(std::vector<std::string> texts) {
  Impl::Block b;
  b.owned = std::move(texts);
  b.texts = b.owned.data();
  b.count = b.owned.size();
  impl_->add(std::move(b));
}

void Tokenizer::Stream::add(PackedTexts texts) {
  Impl::Block b;
  b.count = texts.size();
  b.packed = std::move(texts);
  impl_->add(std::move(b));
}

void Tokenizer::Stream::add_borrowed(const std::string* texts, std::size_t count) {
  Impl::Block b;
  b.texts = texts;
  b.count = count;
  impl_->add(std::move(b));
}

SequenceBatch Tokenizer::Stream::finish(TransformStats* stats, const std::function<void()>& fitted) { return impl_->finish(stats, fitted); }

Tokenizer::Stream Tokenizer::fit_stream(int threads, bool sequences) {
  require_all_tables("fitting");
  auto impl = std::make_unique<Stream::Impl>();
  impl->fitting = this;
  impl->tokenizer = this;
  impl->reread = sequences && options_.deobfuscate && !options_.char_level;
  impl->threads = static_cast<std::size_t>(std::max(1, threads));
  impl->start();
  return Stream(std::move(impl));
}

Tokenizer::Stream Tokenizer::transform_stream(int threads) const {
  auto impl = std::make_unique<Stream::Impl>();
  impl->tokenizer = this;
  impl->threads = static_cast<std::size_t>(std::max(1, threads));
  impl->start();
  return Stream(std::move(impl));
}

namespace {

/// Feeds `texts` to `stream` as borrowed blocks of kBlockTexts.
SequenceBatch run_blocks(Tokenizer::Stream stream, const std::vector<std::string>& texts, TransformStats* stats) {
  for (std::size_t i = 0; i < texts.size(); i += kBlockTexts)
    stream.add_borrowed(texts.data() + i, std::min(kBlockTexts, texts.size() - i));
  return stream.finish(stats);
}

}  // namespace

void Tokenizer::fit_on_texts(const std::vector<std::string>& texts, int threads) { run_blocks(fit_stream(threads, false), texts, nullptr); }

SequenceBatch Tokenizer::fit_transform(const std::vector<std::string>& texts, int threads, TransformStats* stats) {
  return run_blocks(fit_stream(threads), texts, stats);
}

std::vector<Sequence> Tokenizer::texts_to_sequences(const std::vector<std::string>& texts, int threads, TransformStats* stats) const {
  return run_blocks(transform_stream(threads), texts, stats).to_sequences();
}

}  // namespace attn::text
