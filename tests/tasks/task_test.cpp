// The task table: every registered model has a task; opening a model for a command; workers sharing the scoring of rows.
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

TEST_CASE("open_for: a model for a command, refusing inputs its task does not declare for it", "[tasks][table]") {
  using tasks_test::fs::path;
  const path dir = tasks_test::scratch("open_for");
  const std::string run = tasks_test::saved_model(
      "bilstm-attention", dir / "run",
      {{"csv", tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", tasks_test::text_rows(40))}, {"labels", "bad,rude"}},
      {{"embed_dim", 8}, {"lstm_units", 4}});
  data::Inputs declared, undeclared;
  declared.set("text-column", "comment_text", data::Inputs::Origin::kGiven);
  CHECK(tasks::open_for(run, tasks::Command::kEvaluate, declared) != nullptr);
  undeclared.set("beam", "3", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(tasks::open_for(run, tasks::Command::kEvaluate, undeclared),
                    "--beam does not apply to bilstm-attention (a text-classification model)");
  // Robustness reads a labelled file as evaluate does, but draws no pictures and writes no page.
  data::Inputs page;
  page.set("bias-html", "bias.html", data::Inputs::Origin::kGiven);
  CHECK_NOTHROW(tasks::open_for(run, tasks::Command::kEvaluate, page));
  CHECK_THROWS_WITH(tasks::open_for(run, tasks::Command::kRobustness, page),
                    "--bias-html does not apply to bilstm-attention (a text-classification model)");
  // A default (not given) is no request: only what the user gave is checked.
  data::Inputs defaults;
  defaults.set("beam", "3", data::Inputs::Origin::kDefault);
  CHECK_NOTHROW(tasks::open_for(run, tasks::Command::kExplain, defaults));
}

TEST_CASE("open_for: a command not for a task says why", "[tasks][table]") {
  const auto dir = tasks_test::scratch("open_for_features");
  const std::string run = tasks_test::saved_model(
      "feature-attention", dir / "run", {{"csv", tasks_test::write_csv(dir / "f.csv", "a,b,label", {"1,2,0", "2,1,1", "0,3,0", "3,0,1"})}});
  data::Inputs csv;
  csv.set("csv", "x.csv", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(tasks::open_for(run, tasks::Command::kAggregate, csv),
                    "--csv does not apply to feature-attention (a feature-classification model): not for this task (they read texts)");
  CHECK_THROWS_WITH(tasks::open_for(run, tasks::Command::kRobustness, csv),
                    "--csv does not apply to feature-attention (a feature-classification model): not for this task (it rewrites texts)");
  CHECK(tasks::open_for(run, tasks::Command::kEvaluate, csv) != nullptr);
}

TEST_CASE("facts: what a model is, typed; a text classifier's numbers and explanations as explain and predict give them",
          "[tasks][table]") {
  const auto dir = tasks_test::scratch("facts");
  const std::string text_run = tasks_test::saved_model(
      "bilstm-attention", dir / "text",
      {{"csv", tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", tasks_test::text_rows(40))}, {"labels", "bad,rude"}},
      {{"embed_dim", 8}, {"lstm_units", 4}});
  const auto text = tasks::open_model(text_run);
  const tasks::ModelFacts f = text->facts();
  CHECK(f.input == tasks::ModelFacts::Input::kTexts);
  CHECK(f.labels == std::vector<std::string>{"bad", "rude"});
  CHECK_FALSE(f.one_class_per_row);
  // The typed capability gives the numbers predict() and explain() put in their JSON.
  tasks::TextClassifierModel* classifier = text->text_classifier();
  REQUIRE(classifier != nullptr);
  const std::vector<std::string> texts = {"thanks good page", "stupid idiot sucks", ""};
  const std::vector<float> p = classifier->text_probabilities(texts, 2);
  REQUIRE(p.size() == texts.size() * 2);
  std::vector<tasks::Input> inputs;
  for (const std::string& t : texts) inputs.push_back({t, {}});
  const auto predicted = text->predict(inputs, 64);
  const auto explained = classifier->text_explanations(inputs, 64, {});
  REQUIRE(explained.size() == texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(predicted[i].at("probabilities").at("bad").get<float>() == p[i * 2]);
    CHECK(predicted[i].at("probabilities").at("rude").get<float>() == p[i * 2 + 1]);
    CHECK(explained[i].probabilities == std::vector<float>{p[i * 2], p[i * 2 + 1]});
  }
  CHECK(text->explain(inputs, 64, {})->json(1) == report::to_json(explained[1]));

  // One class per row: the classes are the labels.
  const std::string class_run =
      tasks_test::saved_model("bilstm-attention", dir / "classes",
                              {{"csv", tasks_test::write_csv(dir / "c.csv", "post_id,text,label", tasks_test::class_rows(30))},
                               {"text-column", "text"},
                               {"label-column", "label"},
                               {"word-only", ""}},
                              {{"embed_dim", 8}, {"lstm_units", 4}});
  const tasks::ModelFacts c = tasks::open_model(class_run)->facts();
  CHECK(c.one_class_per_row);
  CHECK(c.labels.size() == 3);

  // Feature models read rows and are no text classifier.
  const std::string feature_run =
      tasks_test::saved_model("feature-attention", dir / "features",
                              {{"csv", tasks_test::write_csv(dir / "f.csv", "a,b,label", {"1,2,0", "2,1,1", "0,3,0", "3,0,1"})}});
  const auto features = tasks::open_model(feature_run);
  CHECK(features->facts().input == tasks::ModelFacts::Input::kRows);
  CHECK(features->facts().labels == std::vector<std::string>{"label"});
  CHECK(features->text_classifier() == nullptr);
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
