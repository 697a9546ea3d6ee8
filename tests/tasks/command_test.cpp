// The commands' vocabulary: every task's inputs per command, the tasks' help, the methods a user can name.
#include <algorithm>
#include <set>

#include "attn/models/methods.h"
#include "attn/tasks/command.h"
#include "tasks_test_util.h"

using namespace attn;

namespace {
const tasks::Command kEveryCommand[] = {tasks::Command::kTrain,        tasks::Command::kExplain,   tasks::Command::kEvaluate,
                                        tasks::Command::kFaithfulness, tasks::Command::kExport,    tasks::Command::kAggregate,
                                        tasks::Command::kAudit,        tasks::Command::kRobustness};

bool has(const std::vector<data::InputSpec>& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const data::InputSpec& s) { return s.name == name; });
}
}  // namespace

TEST_CASE("all_inputs: each task's inputs, each name once", "[tasks][table]") {
  for (auto command : kEveryCommand) {
    const auto specs = tasks::all_inputs(command);
    std::set<std::string> names;
    for (const auto& s : specs) CHECK(names.insert(s.name).second);
  }
  const auto train = tasks::all_inputs(tasks::Command::kTrain);
  for (const char* name : {"csv", "data", "text-column", "labels", "maxlen", "feature-columns", "label-column", "source-column"})
    CHECK(std::any_of(train.begin(), train.end(), [&](const data::InputSpec& s) { return s.name == name; }));
}

TEST_CASE("all_inputs: each command declares its own inputs", "[tasks][command]") {
  // aggregate and audit read the texts of a file as explain does, but draw no pictures.
  for (auto command : {tasks::Command::kAggregate, tasks::Command::kAudit}) {
    const auto specs = tasks::all_inputs(command);
    CHECK(has(specs, "csv"));
    CHECK(has(specs, "text-column"));
    CHECK(has(specs, "rows"));
    CHECK_FALSE(has(specs, "svg"));
    CHECK_FALSE(has(specs, "beam"));
  }
  // robustness reads a labelled file as evaluate does, and writes none of evaluate's pictures or pages.
  const auto robustness = tasks::all_inputs(tasks::Command::kRobustness), evaluate = tasks::all_inputs(tasks::Command::kEvaluate);
  for (const char* name : {"csv", "text-column", "id-column", "labels-csv"}) {
    CHECK(has(robustness, name));
    CHECK(has(evaluate, name));
  }
  for (const char* name : {"svg", "bias-html", "beam"}) {
    CHECK_FALSE(has(robustness, name));
    CHECK(has(evaluate, name));
  }
  CHECK(tasks::all_inputs(tasks::Command::kExport).empty());
}

TEST_CASE("tasks_help: per task its models and what a command does with them", "[tasks][command]") {
  for (auto command : kEveryCommand) {
    const std::string help = tasks::tasks_help(command);
    CHECK_THAT(help, Catch::Contains("bilstm-attention"));
    CHECK_THAT(help, Catch::Contains("feature-attention"));
  }
  CHECK_THAT(tasks::tasks_help(tasks::Command::kRobustness), Catch::Contains("not for this task (it rewrites texts)"));
}

TEST_CASE("method_names: every method a user can ask for, never the random floor", "[tasks][command]") {
  const std::vector<std::string> names = tasks::method_names();
  CHECK(names.size() + 1 == models::all_methods().size());
  CHECK(std::find(names.begin(), names.end(), "random") == names.end());
  CHECK(std::find(names.begin(), names.end(), "attention") != names.end());
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
}
