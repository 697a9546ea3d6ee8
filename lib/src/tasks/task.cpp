// The table from a model's kind to its task, and what the task files share.
#include "attn/tasks/task.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <torch/torch.h>

#include "attn/io/atomic_file.h"
#include "attn/tasks/faithfulness.h"
#include "attn/tasks/feature_classification.h"
#include "attn/tasks/seq2seq.h"
#include "attn/tasks/text_classification.h"
#include "attn/text/unicode.h"
#include "task_support.h"

namespace attn::tasks {

namespace {

struct TaskRow {
  models::ModelKind kind;
  const Task& (*task)();
};

// The table: a new task is one file and one row here.
const TaskRow kTasks[] = {
    {models::ModelKind::kTextClassifier, text_classification},
    {models::ModelKind::kFeatureClassifier, feature_classification},
    {models::ModelKind::kSeq2Seq, seq2seq},
};

}  // namespace

const Task& task_for(models::ModelKind kind) {
  for (const TaskRow& row : kTasks)
    if (row.kind == kind) return row.task();
  throw std::logic_error("a model kind without a task (add it to kTasks in task.cpp)");
}

std::vector<data::InputSpec> all_inputs(Command command) {
  std::vector<std::vector<data::InputSpec>> lists;
  for (const TaskRow& row : kTasks) lists.push_back(row.task().inputs(command));
  return data::merge_inputs(lists);
}

std::string tasks_help(Command command) {
  std::string out;
  for (const TaskRow& row : kTasks) {
    std::string names;
    for (const models::ModelEntry& m : models::models())
      if (m.kind == row.kind) names += (names.empty() ? "" : ", ") + m.name;
    if (names.empty()) continue;
    out += "  " + names + ": " + row.task().about(command) + "\n";
  }
  return out;
}

std::unique_ptr<TrainedModel> open_model(const std::string& path) {
  models::SavedModel saved = models::load_model(path, nn::Runtime::kNative);
  const Task& task = task_for(saved.entry->kind);
  return task.use(std::move(saved));
}

data::InputSpec csv_input(const std::string& help) { return {"csv", help, ""}; }

data::InputSpec val_csv_input() {
  return {"val-csv", "Validation rows from this CSV (same columns), instead of the last --val-split of --csv", ""};
}

double Dataset::share_of_loss(const std::vector<std::int64_t>& share, const std::vector<std::int64_t>& batch) const {
  return batch.empty() ? 0.0 : static_cast<double>(share.size()) / static_cast<double>(batch.size());
}

torch::Tensor Dataset::positive_weights(const std::string& spec, const std::vector<std::int64_t>&) const {
  if (!spec.empty()) throw std::invalid_argument("--pos-weight is for classifiers (models with 0/1 labels)");
  return {};
}

data::InputSpec explain_csv_input() {
  return {"csv", "Read the inputs from this CSV: text models its text column (--text-column), feature models its rows", ""};
}

data::InputSpec explain_rows_input() {
  return {"rows", "1-based data rows of --csv, e.g. 1,5,9 (default: text models every row, feature models row 1)", ""};
}

void check_steps(int steps, const std::string& flag) {
  if (steps < 1 || steps > models::kMaxSteps)
    throw std::invalid_argument(flag + " must be in 1.." + std::to_string(models::kMaxSteps) + ", got " + std::to_string(steps));
}

models::ImportanceOptions importance_options(const ExplainOptions& options) {
  models::ImportanceOptions o;
  o.methods = options.methods;
  o.steps = options.steps;
  return o;
}

void store_importance(models::RowImportance row, std::vector<report::Importance>& importance, report::IntegratedGradients& integrated) {
  for (models::MethodScores& m : row.methods) importance.push_back({models::method_name(m.method), std::move(m.scores)});
  integrated.steps = row.steps;
  integrated.completeness_gap = std::move(row.completeness_gap);
}

std::int64_t TrainedModel::explain_cost(const ExplainOptions& options) const {
  return 1 + models::importance_cost(options.methods, options.steps, targets());
}

std::unique_ptr<Erasures> TrainedModel::erasures(const std::string&, const data::Inputs&, std::int64_t, int) {
  throw std::invalid_argument("attn faithfulness measures text and feature classifiers; a " + model_.entry->name +
                              " model's outputs are not class probabilities to erase tokens from");
}

data::InputSpec svg_input() {
  return {"svg",
          "Also draw the attention as SVG: feature models a bar chart (the mean over several rows), seq2seq models one "
          "heatmap per input (OUT.svg, OUT-2.svg, ...)",
          "", data::InputSpec::Kind::kValue, "Output"};
}

std::vector<Input> text_inputs(const std::vector<std::string>& arguments, const std::function<std::vector<std::string>()>& stdin_lines) {
  const std::vector<std::string> texts = arguments.empty() && stdin_lines ? stdin_lines() : arguments;
  std::vector<Input> inputs;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (text::find_invalid_utf8(texts[i]) != std::string::npos)
      throw std::runtime_error("text " + std::to_string(i + 1) + ": invalid UTF-8");
    inputs.push_back({texts[i], {}});
  }
  return inputs;
}

void check_texts(const std::vector<Input>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].values.empty())
      throw std::invalid_argument("input " + std::to_string(i + 1) + ": this model reads texts, not rows of numbers");
    if (text::find_invalid_utf8(inputs[i].text) != std::string::npos)
      throw std::invalid_argument("input " + std::to_string(i + 1) + ": invalid UTF-8");
  }
}

text::Tokenizer read_tokenizer(const std::string& path) { return text::Tokenizer::from_json(io::read_file(path), path); }

text::Tokenizer embedded_tokenizer(const models::SavedModel& model, const std::string& name) {
  // A trained model only applies its tokenizer: word_index is all it reads (the fast load).
  return text::Tokenizer::from_json(model.file(name), model.path + ":" + name, text::TokenizerTables::kForTransform);
}

std::string keep_copy(const std::string& csv, const std::string& run_dir, const std::string& name) {
  namespace fs = std::filesystem;
  const std::string stored = fs::absolute(fs::path(run_dir) / "data" / (name.empty() ? fs::path(csv).filename() : fs::path(name))).string();
  io::ensure_directory((fs::path(run_dir) / "data").string());
  io::write_file_atomic(stored, io::read_file(csv));
  return stored;
}

SharedScoring::SharedScoring(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                             const RowSharing* sharing)
    : rows_(rows), sharing_(sharing && sharing->size() > 1 ? sharing : nullptr) {
  if (sharing_)
    for_each_bucket(rows, lengths, batch_size,
                    [&](const std::vector<std::int64_t>&, const std::vector<std::size_t>& at) { batches_.push_back(at); });
}

std::vector<float> SharedScoring::scores(const std::function<std::vector<float>(const std::vector<std::int64_t>&)>& score) {
  if (!sharing_) return score(rows_);
  // This worker's batches, longest first, as it takes them: [how many, floats per row, the batches' numbers, their outputs].
  std::vector<float> mine{0, 0};
  std::vector<float> outputs;
  sharing_->new_jobs();
  for (std::int64_t job = sharing_->next_job(); job < static_cast<std::int64_t>(batches_.size()); job = sharing_->next_job()) {
    const std::size_t b = batches_.size() - 1 - static_cast<std::size_t>(job);
    std::vector<std::int64_t> some;
    for (std::size_t p : batches_[b]) some.push_back(rows_[p]);
    const std::vector<float> got = score(some);
    if (got.size() % some.size() != 0)
      throw std::logic_error("a score of " + std::to_string(got.size()) + " floats for a batch of " + std::to_string(some.size()) +
                             " rows");
    mine[0] += 1, mine[1] = static_cast<float>(got.size() / some.size());
    mine.push_back(static_cast<float>(b));
    outputs.insert(outputs.end(), got.begin(), got.end());
  }
  mine.insert(mine.end(), outputs.begin(), outputs.end());
  const std::vector<float> all = sharing_->gather(mine);
  // Worker by worker: its batches' numbers, then their outputs, put back in the order of `rows`.
  const auto broken = [&] { return std::runtime_error("the workers' scores of " + std::to_string(rows_.size()) + " rows do not add up"); };
  std::vector<float> out;
  std::size_t per = 0, at = 0, scored = 0;
  taken_.assign(static_cast<std::size_t>(sharing_->size()), {});
  for (auto& taken : taken_) {
    if (at + 2 > all.size()) throw broken();
    const auto n = static_cast<std::size_t>(all[at]), worker_per = static_cast<std::size_t>(all[at + 1]);
    at += 2;
    if (n > 0 && per == 0) per = worker_per, out.assign(rows_.size() * per, 0.0f);
    if ((n > 0 && worker_per != per) || at + n > all.size()) throw broken();
    for (std::size_t i = 0; i < n; ++i) taken.push_back(static_cast<std::size_t>(all[at + i]));
    at += n;
    for (std::size_t b : taken) {
      if (b >= batches_.size() || at + batches_[b].size() * per > all.size()) throw broken();
      for (std::size_t p : batches_[b]) {
        std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(at), per, out.begin() + static_cast<std::ptrdiff_t>(p * per));
        at += per;
      }
      scored += batches_[b].size();
    }
  }
  if (scored != rows_.size() || at != all.size()) throw broken();
  return out;
}

std::vector<std::string> SharedScoring::texts(const std::vector<std::string>& mine) const {
  if (!sharing_) return mine;
  std::vector<float> packed;  // each text as its length, then its bytes (0-255: exact as floats)
  for (const std::string& t : mine) {
    packed.push_back(static_cast<float>(t.size()));
    for (unsigned char c : t) packed.push_back(static_cast<float>(c));
  }
  const std::vector<float> all = sharing_->gather(packed);
  const auto broken = [&] { return std::runtime_error("the workers' texts of " + std::to_string(rows_.size()) + " rows do not add up"); };
  std::vector<std::string> out(rows_.size());
  std::size_t at = 0;
  for (const auto& taken : taken_)
    for (std::size_t b : taken)
      for (std::size_t p : batches_[b]) {
        if (at >= all.size()) throw broken();
        const auto n = static_cast<std::size_t>(all[at++]);
        if (at + n > all.size()) throw broken();
        for (std::size_t i = 0; i < n; ++i) out[p] += static_cast<char>(static_cast<unsigned char>(all[at + i]));
        at += n;
      }
  if (at != all.size()) throw broken();
  return out;
}

std::vector<float> score_shared(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                                const RowSharing* sharing,
                                const std::function<std::vector<float>(const std::vector<std::int64_t>&)>& score) {
  return SharedScoring(rows, lengths, batch_size, sharing).scores(score);
}

}  // namespace attn::tasks
