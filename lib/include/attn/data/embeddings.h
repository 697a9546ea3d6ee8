#pragma once
/// Pretrained word vectors in the text format word2vec, GloVe and fastText share: one "word v1 ...
/// vd" per line, an optional first line "count dim" (word2vec, fastText .vec), plain or gzipped.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace attn::data {

struct WordVectors {
  std::int64_t dim = 0;
  std::unordered_map<std::string, std::vector<float>> vectors;  ///< by the wanted word they stand for
  std::int64_t lines = 0;                                       ///< vectors in the file
  std::int64_t lowercase_matches = 0;                           ///< wanted words found only as another case (e.g. "Apple" for "apple")
};

/// Reads the vectors of the `wanted` words from `path`: a word's own line, or, when the file has
/// none, the first line whose word lowercases (Python's str.lower) to it. Errors (std::runtime_error)
/// name the file and line: an unreadable file, a value that is not a number, a line whose
/// dimension differs from the first.
WordVectors read_word_vectors(const std::string& path, const std::unordered_set<std::string>& wanted);

/// What `attn embed` writes beside its vectors when it learns subwords (VECTORS.subwords): each
/// word's own input row and the n-gram rows, so that a model with --subwords, whose lookup is the
/// mean of a word's row and its n-grams' rows, starts from the same vectors. The file: a line
/// "attn-subwords WORDS BUCKETS DIM 3 6", WORDS lines "word v1 ... vd", BUCKETS lines "v1 ... vd".
struct SubwordRows {
  std::int64_t dim = 0, buckets = 0;
  std::unordered_map<std::string, std::vector<float>> words;  ///< the wanted words' own rows
  std::vector<float> ngrams;  ///< buckets x dim: n-gram row r of text::subword_rows (1-based) at (r - 1) * dim
};
/// Reads `path` (errors name it and the line: a bad header, count or value).
SubwordRows read_subword_rows(const std::string& path, const std::unordered_set<std::string>& wanted);

}  // namespace attn::data
