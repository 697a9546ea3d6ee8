// The task table: every registered model has a task; the tasks' inputs; workers sharing the scoring of rows.
#include <random>
#include <thread>

#include <torch/script.h>

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

TEST_CASE("score_shared: workers score whole batches, each batch once, all gathered back in the rows' order", "[tasks][sharing]") {
  std::vector<std::int64_t> lengths;
  for (int i = 0; i < 300; ++i) lengths.push_back(1 + (i * 37) % 40);
  std::vector<std::int64_t> rows = tasks::all_rows(300);
  std::shuffle(rows.begin(), rows.end(), std::mt19937(3));
  // Per row: its id, and the first row of the batch it was scored in, as one process batches them.
  const auto score = [&](const std::vector<std::int64_t>& some, double* cost) {
    std::vector<float> out(some.size() * 2);
    tasks::for_each_bucket(some, lengths, 16, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
      for (std::size_t i = 0; i < batch.size(); ++i)
        out[at[i] * 2] = static_cast<float>(batch[i]), out[at[i] * 2 + 1] = static_cast<float>(batch.front());
      if (cost) *cost += static_cast<double>(batch.size() * lengths[static_cast<std::size_t>(batch.back())]);
    });
    return out;
  };
  double total = 0;
  const std::vector<float> alone = score(rows, &total);
  tasks_test::TwoThreads state;
  std::vector<std::vector<float>> got(2);
  std::vector<double> cost(2, 0.0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      const tasks_test::ThreadSharing sharing(state, rank);
      const auto r = static_cast<std::size_t>(rank);
      got[r] =
          tasks::score_shared(rows, lengths, 16, &sharing, [&](const std::vector<std::int64_t>& some) { return score(some, &cost[r]); });
    });
  for (auto& t : threads) t.join();
  // Whichever worker took which batch: the batches one process makes, every row's values in place,
  // each batch scored once.
  CHECK(got[0] == alone);
  CHECK(got[1] == alone);
  CHECK(cost[0] + cost[1] == total);
}
