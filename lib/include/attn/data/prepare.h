#pragma once
/// The `attn prepare` pipeline as a library call: a CSV becomes Keras-exact padded word indices
/// with labels and ids, a fitted (or applied) tokenizer, and a report. `attn train --csv` runs it too.
#include <string>

#include <nlohmann/json.hpp>

#include "attn/io/prepared_data.h"
#include "attn/text/dataset.h"
#include "attn/text/tokenizer.h"

namespace attn::data {

struct PrepareOptions {
  std::string csv;
  text::TextCsvOptions columns;
  /// Settings of the tokenizer to fit (ignored when apply_tokenizer is set).
  text::TokenizerOptions tokenizer;
  /// A fitted tokenizer.json to apply instead of fitting one.
  std::string apply_tokenizer;
  /// Or a fitted tokenizer already in memory (e.g. the one inside a model.pt); not owned.
  const text::Tokenizer* apply_loaded_tokenizer = nullptr;
  text::PadOptions pad;
  int threads = 1;
};

struct Prepared {
  io::PreparedData data;
  text::Tokenizer tokenizer;
  /// What prepare.json holds: settings, rows, vocabulary, token accounting, lengths, label rates, timings.
  nlohmann::ordered_json report;
};

/// Reads the CSV (on this thread) while `threads` workers tokenise it, then pads. Errors name the
/// file, line and column (CSV) or the key (tokenizer.json).
Prepared prepare_csv(const PrepareOptions& options);

/// Writes DIR/tokenizer.json, DIR/data.pt and DIR/prepare.json: all three or none.
void write_prepared_dir(const Prepared& prepared, const std::string& dir);

/// The five-line summary `attn prepare` prints.
std::string summary(const Prepared& prepared);

}  // namespace attn::data
