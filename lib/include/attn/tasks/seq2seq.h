#pragma once
/// Sequence to sequence (seq2seq-attention, seeds 002 and 003): a source and a target column of
/// strings, tokenised by character (Keras' Tokenizer(char_level=True): the source lowercased with
/// an OOV character, the target as written), cross-entropy with teacher forcing, greedy decoding;
/// explained by the output x input attention matrix.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tasks/task.h"

namespace attn::tasks {

/// config.json's "data" block of a seq2seq model.
struct Seq2SeqDataConfig {
  std::string csv;  ///< the run's copy of the training CSV
  std::int64_t rows = 0;
  std::string source_column = "source";
  std::string target_column = "target";
  std::int64_t max_source_length = 0;  ///< characters
  std::int64_t max_target_length = 0;  ///< characters, without the end token
  std::vector<std::string> examples;   ///< a few training sources (the explain page's examples)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Seq2SeqDataConfig, csv, rows, source_column, target_column, max_source_length,
                                                max_target_length, examples)

const Task& seq2seq();

}  // namespace attn::tasks
