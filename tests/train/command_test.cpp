// `attn train` as a library call: the plan --dump-config prints (resolved before any data is read), and
// run_training's output, --resume's rule and an interrupted run.
#include <atomic>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/train/command.h"
#include "train_test_util.h"

using namespace attn;

TEST_CASE("the training plan: the model's recipe, its task, what --dump-config prints", "[train][command]") {
  train::TrainRequest r = tasks_test::train_request("feature-attention", "", "f.csv");  // the plan reads no data
  const auto planned = train::planned_config(r);
  CHECK(planned.at("training").at("epochs") == 16);  // seed 001's model.fit(epochs=16, batch_size=128, validation_split=0.3)
  CHECK(planned.at("training").at("batch_size") == 128);
  CHECK(planned.at("training").at("val_split") == 0.3);
  CHECK(planned.at("task") == "feature-classification");
  CHECK(planned.at("model_config_set_from_data").dump() == R"(["features"])");
  // The plan is resolved once: the entry and task start runs, the settings --dump-config prints.
  const train::TrainingPlan plan = train::plan_training(r);
  CHECK(plan.entry->name == "feature-attention");
  CHECK(std::string(plan.task->name()) == "feature-classification");
  CHECK(nlohmann::json(plan.training).dump() == nlohmann::json(planned.at("training")).dump());
  CHECK(plan.model_config.dump() == nlohmann::json(planned.at("model_config")).dump());
  CHECK(train::planned_config(tasks_test::train_request("bilstm-attention", "", "")).at("training").at("batch_size") == 512);  // seed 000's
  // A key the user sets is no longer the data's to set; flags over the recipe; bad values refused.
  r.model_overrides = {{"features", 2}};
  r.training["epochs"] = 3;
  CHECK(train::planned_config(r).at("model_config_set_from_data").empty());
  CHECK(train::plan_training(r).training.epochs == 3);
  r.training["lr"] = 0.0;
  CHECK_THROWS_AS(train::plan_training(r), std::invalid_argument);
  CHECK_THROWS_WITH(train::plan_training(tasks_test::train_request("gpt", "", "")), Catch::Contains("unknown model 'gpt'"));
}

TEST_CASE("run_training: --resume takes only --epochs, refused before anything is read", "[train][command]") {
  train::TrainCommand c;
  c.resume = "/nonexistent/run";
  c.given = {"resume", "epochs", "lr"};
  const std::atomic<bool> stop{false};
  CHECK_THROWS_WITH(train::run_training(c, stop, {}),
                    "--resume continues a run with its own data, model and settings; only --epochs may change (drop --lr)");
}

TEST_CASE("run_training: what it trains, each epoch's figures, where the run is; a stop is an interrupted run", "[train][command]") {
  const auto dir = tasks_test::scratch("command");
  {
    std::ofstream f(dir / "f.csv");
    f << "a,b,label\n";
    for (int i = 0; i < 60; ++i) f << (i % 7) * 0.1 << "," << (i % 3) - 1 << "," << (i % 3 == 2 ? 1 : 0) << "\n";
  }
  train::TrainCommand c;
  c.request = tasks_test::train_request("feature-attention", (dir / "run").string(), (dir / "f.csv").string());
  c.request.training["epochs"] = 2;
  std::string printed;
  int threads = 0, progress = 0;
  train::TrainOutput out;
  out.print = [&](const std::string& text) { printed += text; };
  out.progress = [&](const train::Progress& p) { progress += p.epochs == 2 ? 1 : 0; };
  out.threads = [&](int n) { threads = n; };
  const std::atomic<bool> go{false};
  CHECK(train::run_training(c, go, out) == train::TrainOutcome::kFinished);
  CHECK_THAT(printed, Catch::Contains("epoch 1/2  loss ") && Catch::Contains("epoch 2/2  loss ") && Catch::Contains("val_loss") &&
                          Catch::Contains("done: model.pt, metrics.jsonl and checkpoint.pt in " + (dir / "run").string()));
  CHECK(threads == 1);
  CHECK(progress > 0);
  CHECK(std::filesystem::exists(dir / "run" / "model.pt"));

  c.request.out_dir = (dir / "stopped").string();
  printed.clear();
  const std::atomic<bool> stop{true};
  CHECK(train::run_training(c, stop, out) == train::TrainOutcome::kInterrupted);
  CHECK_THAT(printed, !Catch::Contains("done:"));
  std::filesystem::remove_all(dir);
}
