#pragma once
// The text classifiers' token lookup, words only or with subwords (fastText's character n-grams,
// text/subwords.h): one definition shared by bilstm-attention and transformer-classifier. Internal
// to the models layer.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/models/registry.h"
#include "attn/nn/script_module.h"

namespace attn::models {

/// The "subword_buckets" key: n-gram rows, 0 for words only (set from the data: --subwords).
ConfigKey subwords_key();
/// The "subword_skeletons" key: a word's rows include its consonant skeleton's n-grams (set from
/// the data: --skeletons).
ConfigKey skeletons_key();
/// For entry.fit: subword_buckets and subword_skeletons are the data's.
void fit_subwords(nlohmann::json& config, const nlohmann::json& given, const DataSizes& data);

/// For entry.layers: with subwords, the n-gram table's row after the "embedding" row of `rows`
/// (`width`: the vectors' size).
std::vector<LayerRow> with_subword_row(std::vector<LayerRow> rows, const nlohmann::json& config, const std::string& width);

/// Defines on `m`, which has its word table `embedding` [num_words, D], how it reads ids:
///   token_mask(ids) -> [B, T], the real tokens (not padding);
///   lookup(ids) -> [B, T, D], the tokens' vectors.
/// ids are [B, T] word ids (0 = padding), or with config's subword_buckets > 0 also
/// [B, T, 1 + G]: a word row, then n-gram rows (0 = none). With subwords `m` gets the n-gram table
/// `subword_embedding` [buckets + 1, D] (`init(rows)` makes it, as the model makes its word table)
/// and, for Python, subword_rows(word) and subword_ids(words, word_rows) (text/subwords.h's rule,
/// the skeletons' n-grams included when config's subword_skeletons is true).
void define_lookup(torch::jit::Module& m, const nlohmann::json& config, const std::function<torch::Tensor(std::int64_t rows)>& init,
                   const std::string& what);

/// Defines embed(ids) -> [B, T, D] on `m` (which has lookup, and the float attributes
/// spatial_dropout and lstm_dropout): lookup(ids), and while training Keras' SpatialDropout1D and
/// the LSTM's input dropout, one mask each per sequence and channel, on attn's kernel for kNative.
void define_dropped_embed(torch::jit::Module& m, const nlohmann::json& config, nn::Runtime runtime, const std::string& what);

}  // namespace attn::models
