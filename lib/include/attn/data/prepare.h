#pragma once
/// The `attn prepare` pipeline as a library call: a CSV becomes Keras-exact padded word indices
/// with labels and ids, a fitted (or applied) tokenizer, and a report. `attn train --csv` runs it too.
#include <functional>
#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
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
  /// false: data.x holds only its shape (text::pad_shape) and write_prepared_dir pads the rows
  /// straight into data.pt, chunk by chunk, without the whole matrix in memory (attn prepare).
  bool pad_in_memory = true;
};

struct Prepared {
  io::PreparedData data;
  /// The unpadded rows of data.x, kept when it holds only its shape (PrepareOptions::pad_in_memory).
  text::SequenceBatch sequences;
  text::PadOptions pad;
  int threads = 1;
  text::Tokenizer tokenizer;
  /// tokenizer.to_json(), when prepare_csv fitted the tokenizer: made on another thread from a copy
  /// of the tokenizer as soon as the fit is complete, while the rows are finished, padded and
  /// written (invalid when nothing was fitted).
  std::shared_future<std::string> tokenizer_json;
  /// What prepare.json holds: settings, rows, vocabulary, token accounting, lengths, label rates, timings.
  nlohmann::ordered_json report;
};

/// Reads the CSV (on this thread) while `threads` workers tokenise it, then pads (or not, see
/// PrepareOptions::pad_in_memory). Errors name the file, line and column (CSV) or the key
/// (tokenizer.json).
Prepared prepare_csv(const PrepareOptions& options);

/// Writes DIR/tokenizer.json, DIR/data.pt and DIR/prepare.json: all three or none. data.pt is
/// made and checksummed by the run's threads while tokenizer.json is written on another.
void write_prepared_dir(const Prepared& prepared, const std::string& dir);

/// The five-line summary `attn prepare` prints.
std::string summary(const Prepared& prepared);

/// `attn tokenize`: texts to word indices with a fitted tokenizer.
struct TokenizeRequest {
  std::string tokenizer;  ///< tokenizer.json (attn's or Keras')
  std::string csv;        ///< read the texts from this CSV's `text_column`; empty: from stdin lines
  std::string text_column = "comment_text";
  text::PadOptions pad;  ///< padded when pad.maxlen is set
  int threads = 1;
};
/// One line of space-separated ids per text. Stdin lines with invalid UTF-8 are an error naming the line.
std::string tokenize(const TokenizeRequest& request, const std::function<std::vector<std::string>()>& stdin_lines);

// ---- The command-line inputs of the pipeline (attn prepare, attn train --csv, attn tokenize) ----

/// Keras Tokenizer settings: --num-words, --oov-token, --no-lower, --char-level, --filters, --split.
std::vector<InputSpec> tokenizer_inputs();
text::TokenizerOptions tokenizer_options(const Inputs& inputs);
/// pad_sequences settings: --maxlen (default `default_maxlen`; empty: no padding unless given),
/// --padding, --truncating.
std::vector<InputSpec> padding_inputs(const std::string& default_maxlen);
text::PadOptions padding_options(const Inputs& inputs);
/// Everything that turns a CSV into prepared data: --csv, --text-column, --labels, --id-column,
/// --tokenizer, the tokenizer inputs and the padding inputs (maxlen 200).
std::vector<InputSpec> prepare_inputs();
PrepareOptions prepare_options(const Inputs& inputs, int threads);

}  // namespace attn::data
