#pragma once
// Helpers for the task tests: small CSVs whose rows are one line each, and model files made from them.
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/data/synthetic.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/parallel/sharing.h"
#include "attn/tasks/task.h"

namespace tasks_test {

namespace fs = std::filesystem;

/// Two workers' validation in one process: each thread gathers through this in-memory stand-in
/// for the workers' collective (train/ uses c10d's).
struct TwoThreads {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::vector<float>> parts{2};
  std::vector<std::string> byte_parts{2};
  std::vector<float> gathered;  // the last round's result
  std::vector<std::string> gathered_bytes;
  int arrived = 0, round = 0;
  std::map<std::int64_t, std::int64_t> jobs;  // per scoring, the jobs handed out
  std::vector<int> jobs_taken{0, 0};          // per worker, all the jobs it took
};
class ThreadSharing : public attn::parallel::RowSharing {
 public:
  ThreadSharing(TwoThreads& s, int rank) : s_(s), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  void new_jobs() const override { ++scoring_; }
  std::int64_t next_job() const override {
    std::lock_guard<std::mutex> lock(s_.m);
    ++s_.jobs_taken[static_cast<std::size_t>(rank_)];
    return s_.jobs[scoring_]++;
  }
  std::vector<float> gather(const std::vector<float>& mine) const override {
    std::unique_lock<std::mutex> lock(s_.m);
    const int round = s_.round;
    s_.parts[static_cast<std::size_t>(rank_)] = mine;
    if (++s_.arrived == 2) {  // the round's result, kept until both have taken it (the next round needs both)
      s_.gathered = s_.parts[0];
      s_.gathered.insert(s_.gathered.end(), s_.parts[1].begin(), s_.parts[1].end());
      s_.arrived = 0, ++s_.round;
      s_.cv.notify_all();
    } else {
      s_.cv.wait(lock, [&] { return s_.round != round; });
    }
    return s_.gathered;
  }
  std::vector<std::string> gather_bytes(const std::string& mine) const override {
    std::unique_lock<std::mutex> lock(s_.m);
    const int round = s_.round;
    s_.byte_parts[static_cast<std::size_t>(rank_)] = mine;
    if (++s_.arrived == 2) {
      s_.gathered_bytes = s_.byte_parts;
      s_.arrived = 0, ++s_.round;
      s_.cv.notify_all();
    } else {
      s_.cv.wait(lock, [&] { return s_.round != round; });
    }
    return s_.gathered_bytes;
  }

 private:
  TwoThreads& s_;
  int rank_;
  mutable std::int64_t scoring_ = -1;
};

/// The evaluations of `rows` by two workers sharing them, rank 0's then rank 1's: each thread has
/// the model loaded from `model_path` on its own (as each worker process would; a clone() shares
/// the compiled methods, which two threads must not run at once).
inline std::vector<attn::tasks::Evaluation> shared_evaluations(const attn::tasks::Dataset& data, const std::string& model_path,
                                                               const std::vector<std::int64_t>& rows, std::int64_t batch_size,
                                                               attn::tasks::EvaluateOptions::Detail detail) {
  std::vector<std::unique_ptr<attn::tasks::TrainedModel>> models;
  for (int rank = 0; rank < 2; ++rank) models.push_back(attn::tasks::open_model(model_path));
  TwoThreads state;
  std::vector<attn::tasks::Evaluation> got(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      const ThreadSharing sharing(state, rank);
      got[static_cast<std::size_t>(rank)] =
          data.evaluate(models[static_cast<std::size_t>(rank)]->module(), rows, {batch_size, detail, &sharing});
    });
  }
  for (auto& t : threads) t.join();
  CHECK(state.round > 0);  // the rows were shared out and gathered
  return got;
}

/// Each worker's evaluation of `rows` shared by two is the one process's bit for bit, at either
/// detail: `alone` (a full evaluation: metrics, predictions and pictures), and the metrics alone
/// (validation's) as one process computes them.
inline void check_shared_as_alone(const attn::tasks::Dataset& data, const std::string& model_path, const std::vector<std::int64_t>& rows,
                                  std::int64_t batch_size, const attn::tasks::Evaluation& alone) {
  using Detail = attn::tasks::EvaluateOptions::Detail;
  const auto one = attn::tasks::open_model(model_path);
  const attn::tasks::Evaluation metrics_alone = data.evaluate(one->module(), rows, {batch_size, Detail::kMetrics});
  for (const auto detail : {Detail::kMetrics, Detail::kFull}) {
    const auto shared = shared_evaluations(data, model_path, rows, batch_size, detail);
    for (const attn::tasks::Evaluation& e : shared) {
      CHECK(e.metrics.dump() == (detail == Detail::kFull ? alone : metrics_alone).metrics.dump());
      if (detail == attn::tasks::EvaluateOptions::Detail::kFull) {
        CHECK(e.predictions_csv == alone.predictions_csv);
        CHECK(e.svg == alone.svg);
      }
    }
  }
}

inline fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attn_tasks_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// A features CSV as `attn datagen features` writes it (seed 1): its header and its rows.
inline std::pair<std::string, std::vector<std::string>> generated_features(std::int64_t rows, std::int64_t dims,
                                                                           const std::string& informative) {
  attn::data::GenerateRequest g;
  g.kind = "features";
  g.rows = rows;
  g.dims = dims;
  g.informative = informative;
  std::istringstream lines(attn::data::generate(g));
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::string> out;
  while (std::getline(lines, line)) out.push_back(line);
  return {header, out};
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

/// `count` rows of a one-class-per-row text CSV (post_id,text,label) with learnable classes:
/// "hatespeech" rows hold a word of one set, "offensive" rows of another, "normal" rows neither.
inline std::vector<std::string> class_rows(int count) {
  const std::vector<std::string> nice = {"thanks", "good", "edit", "page", "fine", "see", "talk", "source"};
  const std::vector<std::string> hate = {"vermin", "subhuman"}, offensive = {"stupid", "idiot"};
  std::vector<std::string> rows;
  for (int i = 0; i < count; ++i) {
    std::string text;
    for (int w = 0; w < 3 + i % 5; ++w) text += (w ? " " : "") + nice[static_cast<std::size_t>((i * 7 + w * 3) % 8)];
    const char* label = i % 3 == 0 ? "hatespeech" : i % 3 == 1 ? "offensive" : "normal";
    if (i % 3 == 0) text += " " + hate[static_cast<std::size_t>(i % 2)];
    if (i % 3 == 1) text += " " + offensive[static_cast<std::size_t>(i % 2)];
    rows.push_back("p" + std::to_string(i) + "," + text + "," + label);
  }
  return rows;
}

/// `attn train`'s inputs for `task`: `given`, and every other input's default.
inline attn::data::Inputs train_inputs(const attn::tasks::Task& task, const std::vector<std::pair<std::string, std::string>>& given) {
  attn::data::Inputs in;
  for (const auto& [k, v] : given) in.set(k, v, attn::data::Inputs::Origin::kGiven);
  for (const auto& s : task.inputs(attn::tasks::Command::kTrain))
    if (!s.default_value.empty() && !in.get(s.name)) in.set(s.name, s.default_value, attn::data::Inputs::Origin::kDefault);
  return in;
}

/// A model file as a run directory holds one, without training: `model` built by the registry for
/// the data `inputs` give (its tokenizer, labels, sizes), initial weights from `seed`, saved with
/// the task's files to DIR/model.pt. Returns DIR. (Tests of what training learns are in tests/train/.)
inline std::string saved_model(const std::string& model, const fs::path& dir,
                               const std::vector<std::pair<std::string, std::string>>& inputs,
                               const nlohmann::json& overrides = nlohmann::json::object(), std::uint64_t seed = 1) {
  const attn::models::ModelEntry& entry = attn::models::find_model(model);
  const attn::tasks::Task& task = attn::tasks::task_for(entry.kind);
  const attn::data::Inputs in = train_inputs(task, inputs);
  fs::create_directories(dir);
  const auto data = task.open(in, entry, dir.string(), 1);
  const nlohmann::json model_config = attn::models::fit_config(entry, overrides, data->sizes());
  torch::manual_seed(seed);
  torch::jit::Module module = entry.build(attn::models::resolve_config(entry, model_config), attn::nn::Runtime::kPortable);
  const nlohmann::json config = {{"model", entry.name},
                                 {"task", task.name()},
                                 {"model_revision", entry.revision},
                                 {"model_config", model_config},
                                 {"data", data->data_config()}};
  attn::models::save_model((dir / "model.pt").string(), module, config, data->files());
  return dir.string();
}

/// A bilstm-attention model of class_rows(`rows`) (post_id, text, label; cut to `maxlen` words) in
/// DIR/run, with initial weights (what matters is that the analyses use what it computes); returns
/// the file it read, DIR/posts.csv.
inline std::string class_model(const fs::path& dir, int rows, int maxlen) {
  const std::string csv = write_csv(dir / "posts.csv", "post_id,text,label", class_rows(rows));
  saved_model(
      "bilstm-attention", dir / "run",
      {{"csv", csv}, {"text-column", "text"}, {"id-column", "post_id"}, {"label-column", "label"}, {"maxlen", std::to_string(maxlen)}},
      {{"embed_dim", 8}, {"lstm_units", 4}});
  return csv;
}

}  // namespace tasks_test
