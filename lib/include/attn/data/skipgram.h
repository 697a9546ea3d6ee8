#pragma once
/// Word vectors learnt from unlabelled text (`attn embed`): skip-gram with negative sampling
/// (Mikolov et al. 2013), each word also the bag of its character n-grams as fastText has it
/// (Bojanowski et al. 2017; text/subwords.h: the same n-grams and hash as the models' --subwords).
/// A word predicts the words around it: its vector, the mean of its own input row and its n-grams'
/// rows, is pushed towards each context word's output row and away from `negatives` words drawn by
/// count^0.5; frequent words are subsampled; the step decays linearly to 0. The vectors then start a
/// model's embedding (`attn train --embeddings`).
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "attn/data/embeddings.h"

namespace attn::data {

struct SkipgramOptions {
  std::int64_t dim = 100;
  std::int64_t epochs = 5;
  std::int64_t window = 5;     ///< context words on each side, at most (each position draws 1..window)
  std::int64_t negatives = 5;  ///< negative words per context word
  std::int64_t min_count = 5;  ///< rarer words are left out (they still count as words seen)
  std::int64_t buckets = 0;    ///< n-gram rows (fastText's subwords); 0: whole words only (word2vec)
  bool skeletons = false;      ///< with subwords, a word's rows include its consonant skeleton's (text/subwords.h)
  double lr = 0.05;            ///< the first step size, decaying linearly to 0
  double sample = 1e-4;        ///< subsampling threshold t: a word of frequency f is kept with p = sqrt(t/f) + t/f
  std::uint64_t seed = 1;
  /// Threads update the shared rows without locks, as word2vec and fastText do ("Hogwild"): with
  /// more than 1 the result depends on their interleaving; with 1 it is the same on every run.
  int threads = 1;
};

struct SkipgramVectors {
  std::int64_t dim = 0, buckets = 0;
  bool skeletons = false;            ///< the options' (text::subword_rows)
  std::vector<std::string> words;    ///< by count, most frequent first
  std::vector<std::int64_t> counts;  ///< each word's count in the texts
  /// (words + buckets) x dim input rows: each word's own row, then the n-gram rows (fastText's
  /// layout: n-gram row r of text::subword_rows is row words + r - 1).
  std::vector<float> input;
  std::int64_t tokens = 0;  ///< tokens in the texts (before min_count and subsampling)
  double loss = 0;          ///< the last epoch's mean negative-sampling loss per prediction
  /// A word's vector: the mean of its own row and its n-grams' rows (its own row without subwords).
  std::vector<float> vector(std::size_t word) const;
};

/// Learns vectors from `texts`, each split into words as the Keras tokenizer splits them (lowercase,
/// its filters). Throws std::invalid_argument for bad options or texts without a word of min_count.
SkipgramVectors train_skipgram(const std::vector<std::string>& texts, const SkipgramOptions& options);

/// Writes `vectors` to `path` in the word2vec / fastText text format ("count dim", then "word v1 ...
/// vd": each word's vector), which `--embeddings` and other tools read; with subwords also
/// `path` + ".subwords" (read_subword_rows: what a model with --subwords starts from). Both files
/// appear whole or not at all.
void write_skipgram_vectors(const SkipgramVectors& vectors, const std::string& path);

/// `vectors` in memory as the files write_skipgram_vectors writes read back: the `wanted` words'
/// vectors (read_word_vectors), and with subwords their own rows and every n-gram row
/// (read_subword_rows; empty without subwords), at full precision.
WordVectors word_vectors_of(const SkipgramVectors& vectors, const std::unordered_set<std::string>& wanted);
SubwordRows subword_rows_of(const SkipgramVectors& vectors, const std::unordered_set<std::string>& wanted);

/// What `attn embed` does: the texts of a file (a CSV, TSV or JSON Lines column, or a plain text
/// file's lines), learnt (train_skipgram) and written (write_skipgram_vectors).
struct EmbedRequest {
  std::string input;   ///< the file
  bool lines = false;  ///< a plain text file, one text per line (else a table)
  std::string text_column = "comment_text";
  std::string format = "auto";  ///< the table's format: csv, tsv, jsonl or auto (by extension)
  std::string out;              ///< the vectors (.vec), and with subwords out + ".subwords"
  SkipgramOptions options;
};
/// Reads, learns and writes; errors name the file (and line, column).
SkipgramVectors embed_file(const EmbedRequest& request);

}  // namespace attn::data
