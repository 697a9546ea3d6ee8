#pragma once
// What the task files (text_classification.cpp, feature_classification.cpp, seq2seq.cpp) share:
// input declarations, reading texts and tokenizers, the runs' copies of CSVs. Internal to the tasks
// layer: a C++ user of attn calls task.h and analyses/.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/io/json_like.h"
#include "attn/models/importance.h"
#include "attn/models/saved_model.h"
#include "attn/parallel/sharing.h"
#include "attn/report/explanation.h"
#include "attn/tasks/task.h"
#include "attn/text/tokenizer.h"

namespace attn::tasks {

/// Rows scored by workers sharing them (parallel/sharing.h), their scoring batches
/// for_each_bucket(rows, lengths, batch_size)'s (bucketing a batch's rows gives back that batch, so
/// each is scored as one process scores it).
parallel::SharedScoring shared_scoring(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths,
                                       std::int64_t batch_size, const parallel::RowSharing* sharing);

/// shared_scoring(rows, lengths, batch_size, sharing).scores(score).
std::vector<float> score_shared(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                                const parallel::RowSharing* sharing,
                                const std::function<std::vector<float>(const std::vector<std::int64_t>&)>& score);

/// The driver's options for `options` (its methods and steps).
models::ImportanceOptions importance_options(const ExplainOptions& options);
/// The driver's scores of one row into an explanation: each method under its name, and integrated
/// gradients' steps and completeness gap when they were computed.
void store_importance(models::RowImportance row, std::vector<report::Importance>& importance, report::IntegratedGradients& integrated);

/// The "csv" input every task reads, and "val-csv", validation rows of their own.
data::InputSpec csv_input(const std::string& help);
data::InputSpec val_csv_input();
/// explain's "csv" and "rows": inputs read from a CSV, for the tasks that can.
data::InputSpec explain_csv_input();
data::InputSpec explain_rows_input();
/// explain's "svg" output, for the tasks that draw their explanations.
data::InputSpec svg_input();
/// Texts from the positional arguments, or stdin lines when there are none; invalid UTF-8 is an
/// error naming the text.
std::vector<Input> text_inputs(const std::vector<std::string>& arguments, const std::function<std::vector<std::string>()>& stdin_lines);
/// For the tasks that read texts: every input is a text of valid UTF-8 (not a row of numbers).
void check_texts(const std::vector<Input>& inputs);
/// `data` parsed as a task's typed data config; errors name `what` (a file) and the key.
template <class Config>
Config parse_data_config(const nlohmann::json& data, const std::string& what) {
  try {
    return io::get_like<Config>(data);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": config.json's \"data\": " + e.what());
  }
}
/// A tokenizer.json file (Keras' format), or one embedded in a model; errors name the file.
text::Tokenizer read_tokenizer(const std::string& path);
text::Tokenizer embedded_tokenizer(const models::SavedModel& model, const std::string& name);
/// The run's copy of a CSV (RUN_DIR/data/NAME, NAME the CSV's own unless given), written once the
/// CSV has been read without error; returns its absolute path.
std::string keep_copy(const std::string& csv, const std::string& run_dir, const std::string& name = "");
/// Each row of a run's rows file `path` ({"rows": [[row, ...], ...]}: what a training feature keeps
/// for --resume and the workers), given to `read`. A file of another shape, or a row `read` refuses
/// (std::runtime_error), throws std::runtime_error naming the file and `what` it should hold.
void read_rows_file(const std::string& path, const char* what, const std::function<void(const nlohmann::json& row)>& read);

}  // namespace attn::tasks
