#pragma once
/// Word importance over a corpus (`attn aggregate`): which words drive each label across a file.
/// Every row is explained (the asked methods, in length-bucketed batches, a chunk of rows at a
/// time); each label's rows are those the model decides for it (one class per row: the most
/// probable class; 0/1 labels: p >= 0.5). Per method and label, each word (a token of the model's
/// tokenizer, lowercased and filtered as it reads it) gets its count there and its mean score, the
/// score of the label at each of its occurrences. Words seen fewer than --min-count times are not
/// ranked. Stability: Kendall's tau-b between the words' means in the file's first and second
/// halves, over the union of the two halves' top --top words (a word not ranked in a half takes the
/// lowest place there); near 1, the ranking is the data's, not chance's.
///
/// The file is explained a chunk of rows at a time, each chunk's sums kept apart and added in chunk
/// order: with --nproc N the workers explain whichever chunks they take and hand rank 0 their
/// chunks' sums, so N workers give the same bits as one process.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <chrono>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/models/methods.h"

namespace attn::parallel {
class RowSharing;  // parallel/sharing.h
}

namespace attn::analyses {

/// A word's figures for one method and label.
struct WordFigure {
  std::string word;
  std::int64_t count = 0;
  double mean = 0;
};

/// The sums behind the figures: per word, its scores' sum and count in each half of the file.
class WordTotals {
 public:
  void add(const std::string& word, double score, int half);
  /// The words seen at least `min_count` times (in `half`, or in both halves with -1), by mean
  /// score (highest first; ties: the word in byte order), at most `top` of them (0: all).
  std::vector<WordFigure> ranked(std::int64_t min_count, std::size_t top, int half = -1) const;
  /// Kendall's tau-b of the halves' means over the union of their top `top` words (see above);
  /// nullopt when the union has fewer than 2 words.
  std::optional<double> stability(std::int64_t min_count, std::size_t top) const;
  /// Adds `other`'s sums and counts to these.
  void merge(const WordTotals& other);
  /// {word: [sum of half 0, sum of half 1, count of half 0, count of half 1]}, and back (the sums
  /// exact: JSON's numbers round-trip doubles).
  nlohmann::json to_json() const;
  static WordTotals from_json(const nlohmann::json& j);

 private:
  struct Sums {
    double sum[2] = {0, 0};
    std::int64_t count[2] = {0, 0};
  };
  std::map<std::string, Sums> words_;
};

/// `attn aggregate`: a text model's word importance over a file.
struct AggregateRequest {
  std::string model;
  data::Inputs options;                 ///< the task's explain inputs: --csv, --text-column, --rows
  std::vector<models::Method> methods;  ///< none: attention (and grad-input when the model gives it)
  int steps = models::kDefaultSteps;
  std::int64_t top = 20;       ///< words listed per method and label (and the stability's k)
  std::int64_t min_count = 5;  ///< a word ranked only if seen this often in the label's rows
  std::int64_t batch_size = 64;
  std::int64_t chunk = 2048;    ///< rows explained at once (what is held in memory)
  std::string json, csv, html;  ///< outputs ("" = none), written together once all is computed
  /// Workers sharing the chunks, or none: each explains the chunks it takes; rank 0 writes the
  /// files and returns the table, the others return "".
  const parallel::RowSharing* sharing = nullptr;
};
/// Explains every row and aggregates; returns the table to print.
std::string aggregate(const AggregateRequest& request);
/// `attn aggregate` under torchrun or `attn aggregate --nproc N`: joins the workers the
/// environment names (one process when it names none) and shares the chunks among them.
std::string aggregate(const AggregateRequest& request, std::chrono::seconds worker_timeout);

}  // namespace attn::analyses
