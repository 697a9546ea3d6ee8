#pragma once
/// The model store of `attn serve`: each model loaded once per inference thread (a TorchScript
/// module's methods run on one thread at a time), warmed up on its examples, described for
/// /v1/models, and re-read while requests continue, on one loader thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tasks/task.h"

namespace attn::server {

/// One load of a model file.
struct Loaded {
  std::vector<std::shared_ptr<tasks::TrainedModel>> copies;  ///< one per inference thread
  nlohmann::ordered_json info;                               ///< what /v1/models says of it
};

class ModelStore {
 public:
  /// `arguments`: NAME=PATH or PATH each (parse_model_argument). std::invalid_argument for none or
  /// a repeated name.
  ModelStore(const std::vector<std::string>& arguments, int copies, std::int64_t max_batch, int max_steps);
  ~ModelStore();
  ModelStore(const ModelStore&) = delete;
  ModelStore& operator=(const ModelStore&) = delete;

  /// Loads every model; a bad one is std::runtime_error naming it. Logs each.
  void load(const std::function<void(const std::string&)>& log);

  std::size_t size() const { return models_.size(); }
  const std::string& name(std::size_t model) const { return models_[model].name; }
  std::optional<std::size_t> find(const std::string& name) const;
  /// The names, comma-separated (for messages).
  std::string names() const;
  /// Model `model`'s load now (a reload swaps it; a request keeps the one it started with).
  std::shared_ptr<const Loaded> current(std::size_t model) const;

  /// Re-reads model `model`'s file on the loader thread: loaded, checked (the file's checksums, a
  /// warm-up on its examples), then `done(fresh, nullptr)` there, or `done(nullptr, error)` with the
  /// loaded model left serving. Reloads run one at a time, in the order asked.
  using Reloaded = std::function<void(std::shared_ptr<const Loaded>, std::exception_ptr)>;
  void reload(std::size_t model, Reloaded done);
  /// Makes `fresh` model `model`'s load (after the batcher has it).
  void install(std::size_t model, std::shared_ptr<const Loaded> fresh);

 private:
  struct Model {
    std::string name, path;
    std::shared_ptr<const Loaded> loaded;  ///< read and swapped with std::atomic_load / atomic_store
  };
  std::shared_ptr<const Loaded> load_file(const Model& m) const;

  std::vector<Model> models_;
  int copies_;
  std::int64_t max_batch_;
  int max_steps_;
  class Loader;
  std::unique_ptr<Loader> loader_;
};

}  // namespace attn::server
