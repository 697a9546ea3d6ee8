#pragma once
// Helpers for the training tests: the task tests' CSV helpers, and training runs on them.
#include <atomic>

#include "../tasks/tasks_test_util.h"
#include "attn/train/run.h"

namespace tasks_test {

/// `attn train --model MODEL --csv CSV --out OUT --threads 1`, the label column the default's.
inline attn::train::TrainRequest train_request(const std::string& model, const std::string& out, const std::string& csv) {
  attn::train::TrainRequest r;
  r.model = model;
  r.out_dir = out;
  r.data.set("csv", csv, attn::data::Inputs::Origin::kGiven);
  r.data.set("label-column", "label", attn::data::Inputs::Origin::kDefault);
  r.training = {{"threads", 1}};
  return r;
}

/// Trains `model` on `inputs` (given values) into `dir` with `training` settings; returns the last metrics.jsonl record.
inline nlohmann::json train_run(const std::string& model, const std::string& dir,
                                const std::vector<std::pair<std::string, std::string>>& inputs, const nlohmann::json& overrides,
                                nlohmann::json training) {
  attn::train::TrainRequest r;
  r.model = model;
  r.model_overrides = overrides;
  if (!training.contains("threads")) training["threads"] = 1;
  r.training = training;
  r.out_dir = dir;
  r.data = train_inputs(attn::tasks::task_for(attn::models::find_model(model).kind), inputs);
  std::atomic<bool> stop{false};
  attn::train::TrainingRun run = attn::train::TrainingRun::start(r);
  REQUIRE(run.train(stop, nullptr, nullptr));
  std::ifstream f(fs::path(dir) / "metrics.jsonl");
  std::string line, last;
  while (std::getline(f, line)) last = line;
  return nlohmann::json::parse(last);
}

}  // namespace tasks_test
