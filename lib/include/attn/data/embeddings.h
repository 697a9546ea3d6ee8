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

}  // namespace attn::data
