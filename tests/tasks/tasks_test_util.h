#pragma once
// Helpers for the task tests: small CSVs whose rows are one line each, and training runs on them.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/train/run.h"

namespace tasks_test {

namespace fs = std::filesystem;

inline fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attn_tasks_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Writes `header` and `rows` (one line each) to `path`.
inline std::string write_csv(const fs::path& path, const std::string& header, const std::vector<std::string>& rows) {
  std::ofstream f(path, std::ios::binary);
  f << header << "\n";
  for (const auto& r : rows) f << r << "\n";
  return path.string();
}

/// `count` rows of a two-label text CSV (id,comment_text,bad,rude) with learnable labels.
inline std::vector<std::string> text_rows(int count) {
  const std::vector<std::string> nice = {"thanks", "good", "edit", "page", "fine", "see", "talk", "source"};
  const std::vector<std::string> nasty = {"stupid", "idiot", "sucks"};
  std::vector<std::string> rows;
  for (int i = 0; i < count; ++i) {
    std::string text;
    for (int w = 0; w < 3 + i % 5; ++w) text += (w ? " " : "") + nice[static_cast<std::size_t>((i * 7 + w * 3) % 8)];
    const bool bad = i % 3 == 0, rude = i % 4 == 0;
    if (bad) text += " " + nasty[static_cast<std::size_t>(i % 2)];
    if (rude) text += " sucks";
    rows.push_back("r" + std::to_string(i) + "," + text + "," + (bad ? "1" : "0") + "," + (rude ? "1" : "0"));
  }
  return rows;
}

/// Trains `model` on `inputs` (given values) into `dir` with `training` settings; returns the last metrics.jsonl record.
inline nlohmann::json train_run(const std::string& model, const std::string& dir, const std::vector<std::pair<std::string, std::string>>& inputs,
                            const nlohmann::json& overrides, nlohmann::json training) {
  attn::train::TrainRequest r;
  r.model = model;
  r.model_overrides = overrides;
  if (!training.contains("threads")) training["threads"] = 1;
  r.training = training;
  r.out_dir = dir;
  for (const auto& [k, v] : inputs) r.data.set(k, v, attn::data::Inputs::Origin::kGiven);
  for (const auto& s : attn::tasks::task_for(attn::models::find_model(model).kind).inputs(attn::tasks::Command::kTrain))
    if (!s.default_value.empty() && !r.data.get(s.name)) r.data.set(s.name, s.default_value, attn::data::Inputs::Origin::kDefault);
  std::atomic<bool> stop{false};
  attn::train::TrainingRun run = attn::train::TrainingRun::start(r);
  REQUIRE(run.train(stop, nullptr, nullptr));
  std::ifstream f(fs::path(dir) / "metrics.jsonl");
  std::string line, last;
  while (std::getline(f, line)) last = line;
  return nlohmann::json::parse(last);
}

}  // namespace tasks_test
