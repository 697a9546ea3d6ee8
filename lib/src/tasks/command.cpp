#include "attn/tasks/command.h"

#include "attn/models/methods.h"
#include "attn/models/registry.h"
#include "attn/tasks/task.h"

namespace attn::tasks {

ForCommand texts_only(Command command) {
  return {command == Command::kRobustness ? "not for this task (it rewrites texts)" : "not for this task (they read texts)", {}};
}

std::vector<data::InputSpec> all_inputs(Command command) {
  std::vector<std::vector<data::InputSpec>> lists;
  for (const TaskRow& row : all_tasks()) lists.push_back(row.task->inputs(command));
  return data::merge_inputs(lists);
}

std::string tasks_help(Command command) {
  std::string out;
  for (const TaskRow& row : all_tasks()) {
    std::string names;
    for (const models::ModelEntry& m : models::models())
      if (m.kind == row.kind) names += (names.empty() ? "" : ", ") + m.name;
    if (names.empty()) continue;
    out += "  " + names + ": " + row.task->about(command) + "\n";
  }
  return out;
}

std::vector<std::string> method_names() {
  std::vector<std::string> out;
  for (const models::MethodInfo& m : models::all_methods())
    if (m.method != models::Method::kRandom) out.emplace_back(m.name);
  return out;
}

}  // namespace attn::tasks
