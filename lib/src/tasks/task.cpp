// The table from a model's kind to its task, and what the task files share.
#include "attn/tasks/task.h"

#include <filesystem>
#include <stdexcept>

#include "attn/io/atomic_file.h"
#include "attn/tasks/feature_classification.h"
#include "attn/tasks/seq2seq.h"
#include "attn/tasks/text_classification.h"
#include "attn/text/unicode.h"

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

std::unique_ptr<TrainedModel> open_model(const std::string& path) {
  models::SavedModel saved = models::load_model(path);
  const Task& task = task_for(saved.entry->kind);
  return task.use(std::move(saved));
}

data::InputSpec csv_input(const std::string& help) { return {"csv", help, ""}; }

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
    if (!inputs[i].values.empty()) throw std::invalid_argument("input " + std::to_string(i + 1) + ": this model reads texts, not rows of numbers");
    if (text::find_invalid_utf8(inputs[i].text) != std::string::npos)
      throw std::invalid_argument("input " + std::to_string(i + 1) + ": invalid UTF-8");
  }
}

text::Tokenizer read_tokenizer(const std::string& path) { return text::Tokenizer::from_json(io::read_file(path), path); }

text::Tokenizer embedded_tokenizer(const models::SavedModel& model, const std::string& name) {
  return text::Tokenizer::from_json(model.file(name), model.path + ":" + name);
}

std::string keep_copy(const std::string& csv, const std::string& run_dir) {
  namespace fs = std::filesystem;
  const std::string stored = fs::absolute(fs::path(run_dir) / "data" / fs::path(csv).filename()).string();
  io::ensure_directory((fs::path(run_dir) / "data").string());
  io::write_file_atomic(stored, io::read_file(csv));
  return stored;
}

}  // namespace attn::tasks
