// The table from a model's kind to its task, and what the task files share.
#include "attn/tasks/task.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <torch/script.h>

#include "attn/io/atomic_file.h"
#include "attn/parallel/workers.h"
#include "attn/tasks/feature_classification.h"
#include "attn/tasks/seq2seq.h"
#include "attn/tasks/span_tagging.h"
#include "attn/tasks/text_classification.h"
#include "attn/text/unicode.h"
#include "task_support.h"

namespace attn::tasks {

namespace {

struct TableRow {
  models::ModelKind kind;
  const Task& (*task)();
};

// The table: a new task is one file and one row here.
const TableRow kTasks[] = {
    {models::ModelKind::kTextClassifier, text_classification},
    {models::ModelKind::kFeatureClassifier, feature_classification},
    {models::ModelKind::kSeq2Seq, seq2seq},
    {models::ModelKind::kSpanTagger, span_tagging},
};

}  // namespace

const Task& task_for(models::ModelKind kind) {
  for (const TableRow& row : kTasks)
    if (row.kind == kind) return row.task();
  throw std::logic_error("a model kind without a task (add it to kTasks in task.cpp)");
}

std::vector<TaskRow> all_tasks() {
  std::vector<TaskRow> out;
  for (const TableRow& row : kTasks) out.push_back({row.kind, &row.task()});
  return out;
}

std::unique_ptr<TrainedModel> open_model(const std::string& path) {
  models::SavedModel saved = models::load_model(path, nn::Runtime::kNative);
  const Task& task = task_for(saved.entry->kind);
  return task.use(std::move(saved));
}

std::unique_ptr<TrainedModel> open_for(const std::string& path, Command command, const data::Inputs& inputs) {
  std::unique_ptr<TrainedModel> model = open_model(path);
  const Task& task = task_for(model->saved().entry->kind);
  const std::vector<data::InputSpec> declared = task.inputs(command);
  const std::vector<std::string> given = inputs.given_names();
  if (declared.empty() && !given.empty())  // the command is not for this task: say why
    throw std::invalid_argument("--" + given.front() + " does not apply to " + describe_model(model->saved()) + ": " + task.about(command));
  data::require_declared(inputs, declared, describe_model(model->saved()));
  return model;
}

const models::ModelEntry& model_for_training(const data::Inputs& inputs) {
  const std::vector<std::string> given = inputs.given_names();
  const auto declares = [&](const Task& task, const std::string& name) {
    for (const data::InputSpec& spec : task.inputs(Command::kTrain))
      if (spec.name == name) return true;
    return false;
  };
  for (const models::ModelEntry& m : models::models())
    if (std::all_of(given.begin(), given.end(), [&](const std::string& name) { return declares(task_for(m.kind), name); })) return m;
  std::string readers;  // which task reads each input given that not every task reads
  for (const std::string& name : given) {
    std::string tasks;
    for (const TaskRow& row : all_tasks())
      if (declares(*row.task, name)) tasks += std::string(tasks.empty() ? "" : " and ") + row.task->name();
    bool everywhere = true;
    for (const TaskRow& row : all_tasks()) everywhere = everywhere && declares(*row.task, name);
    if (!everywhere) readers += (readers.empty() ? "" : "; ") + ("--" + name) + " is for " + (tasks.empty() ? "no task" : tasks);
  }
  throw std::invalid_argument("no model's task reads all of the inputs given (" + readers + "): choose the inputs of one task, or --model");
}

ExplainOptions explain_options(const TrainedModel& model, const std::vector<models::Method>& methods, int steps, const std::string& label,
                               const std::string& flag) {
  ExplainOptions o;
  check_steps(steps, "--steps");
  o.steps = steps;
  o.label = label;
  // The attention alone is what every explanation shows (a span tagger's: its marks): no method to add.
  if (!methods.empty() && methods != std::vector<models::Method>{models::Method::kAttention})
    o.methods = models::check_available(methods, model.methods(), flag);
  if (o.methods == std::vector<models::Method>{models::Method::kAttention}) o.methods.clear();  // today's output
  return o;
}

data::InputSpec csv_input(const std::string& help) { return {"csv", help, ""}; }

data::InputSpec val_csv_input() {
  return {"val-csv", "Validation rows from this CSV (same columns), instead of the last --val-split of --csv", ""};
}

double Dataset::share_of_loss(const std::vector<std::int64_t>& share, const std::vector<std::int64_t>& batch) const {
  return batch.empty() ? 0.0 : static_cast<double>(share.size()) / static_cast<double>(batch.size());
}

std::string describe_model(const models::SavedModel& m) { return m.entry->name + " (a " + task_for(m.entry->kind).name() + " model)"; }

std::unique_ptr<Dataset> TrainedModel::open_rewritten_csv(const std::string&, const data::Inputs&, int, const TextRewrite&) const {
  throw std::invalid_argument(std::string(saved().entry->name) +
                              " does not read texts a rewrite could change (robustness is for text classifiers)");
}

void Task::check_loss_weights(const LossWeights& spec, torch::jit::Module&) const {
  if (spec.span_f1 != 0) throw std::invalid_argument("--span-f1-loss is for span taggers (--spans-column)");
}

torch::Tensor Dataset::loss_weights(const LossWeights& spec, const std::vector<std::int64_t>&) const {
  if (!spec.positive.empty()) throw std::invalid_argument("--pos-weight is for classifiers (models with 0/1 labels)");
  if (!spec.classes.empty()) throw std::invalid_argument("--class-weight is for text classifiers with one class per row (--label-column)");
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

/// One input's share of request_cost: its units (at least 1) times the passes over them.
static std::int64_t input_cost(std::int64_t units, const ExplainOptions& options, std::int64_t targets) {
  const std::int64_t n = std::max<std::int64_t>(1, units);
  return n * (1 + models::importance_cost(options.methods, options.steps, targets, n));
}

std::int64_t TrainedModel::request_cost_bound(std::size_t inputs, const ExplainOptions& options) const {
  const std::int64_t most = most_units();  // (an input's cost grows with its units)
  return most < 0 ? -1 : static_cast<std::int64_t>(inputs) * input_cost(most, options, targets());
}

std::int64_t TrainedModel::request_cost(const std::vector<Input>& inputs, const ExplainOptions& options) const {
  std::int64_t cost = 0;
  for (const std::int64_t read : units(inputs)) cost += input_cost(read, options, targets());
  return cost;
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

void read_rows_file(const std::string& path, const char* what, const std::function<void(const nlohmann::json& row)>& read) {
  try {
    const nlohmann::json file = nlohmann::json::parse(io::read_file(path));  // (kept alive: `read` may keep views into it)
    for (const nlohmann::json& row : file.at("rows")) read(row);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not " + what + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

parallel::SharedScoring shared_scoring(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths,
                                       std::int64_t batch_size, const parallel::RowSharing* sharing) {
  std::vector<std::vector<std::size_t>> batches;
  if (sharing && sharing->size() > 1)
    for_each_bucket(rows, lengths, batch_size,
                    [&](const std::vector<std::int64_t>&, const std::vector<std::size_t>& at) { batches.push_back(at); });
  return parallel::SharedScoring(rows, std::move(batches), sharing);
}

std::vector<float> score_shared(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& lengths, std::int64_t batch_size,
                                const parallel::RowSharing* sharing,
                                const std::function<std::vector<float>(const std::vector<std::int64_t>&)>& score) {
  return shared_scoring(rows, lengths, batch_size, sharing).scores(score);
}

}  // namespace attn::tasks
