// The task table: every registered model has a task; the tasks' inputs.
#include <torch/torch.h>

#include "attn/models/registry.h"
#include "attn/tasks/task.h"
#include "tasks/task_support.h"
#include "tasks_test_util.h"

using namespace attn;

TEST_CASE("every registered model's kind has a task that reads a CSV to train and to evaluate", "[tasks][table]") {
  for (const auto& entry : models::models()) {
    INFO(entry.name);
    const tasks::Task& task = tasks::task_for(entry.kind);
    CHECK(std::string(task.name()).size() > 0);
    for (auto command : {tasks::Command::kTrain, tasks::Command::kEvaluate}) {
      const auto specs = task.inputs(command);
      CHECK(std::any_of(specs.begin(), specs.end(), [](const data::InputSpec& s) { return s.name == "csv"; }));
    }
  }
  CHECK(std::string(tasks::task_for(models::ModelKind::kSeq2Seq).name()) == "seq2seq");
}

TEST_CASE("all_inputs: each task's inputs, each name once", "[tasks][table]") {
  for (auto command : {tasks::Command::kTrain, tasks::Command::kExplain, tasks::Command::kEvaluate}) {
    const auto specs = tasks::all_inputs(command);
    std::set<std::string> names;
    for (const auto& s : specs) CHECK(names.insert(s.name).second);
  }
  const auto train = tasks::all_inputs(tasks::Command::kTrain);
  for (const char* name : {"csv", "data", "text-column", "labels", "maxlen", "feature-columns", "label-column", "source-column"})
    CHECK(std::any_of(train.begin(), train.end(), [&](const data::InputSpec& s) { return s.name == name; }));
}

TEST_CASE("text inputs: arguments, else stdin lines, invalid UTF-8 names the text", "[tasks][table]") {
  CHECK(tasks::text_inputs({"a", "b"}, [] { return std::vector<std::string>{"never"}; }).size() == 2);
  CHECK(tasks::text_inputs({}, [] { return std::vector<std::string>{"x", "y", "z"}; })[2].text == "z");
  CHECK_THROWS_WITH(tasks::text_inputs({"ok", "bad \xC3\x28"}, nullptr), "text 2: invalid UTF-8");
}
