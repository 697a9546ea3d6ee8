#pragma once
/// A trained model in one file: the TorchScript module (model.pt) with the run's config.json and
/// its task's files (e.g. tokenizer.json) embedded as extra files, so explaining or evaluating
/// needs nothing else, in attn or in Python (torch.jit.load(path, _extra_files={"config.json": ""})).
/// What the files mean is the task's business (lib/src/tasks/); here they are bytes.
#include <map>
#include <string>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/models/registry.h"

namespace attn::models {

struct SavedModel {
  std::string path;
  torch::jit::Module module;                 ///< what to run, in eval mode: the native build or the file's module
  torch::jit::Module portable;               ///< the file's module as saved (what export writes back)
  nlohmann::json config;                     ///< the run's config.json: "model", "task", "model_config", "data", "training"
  const ModelEntry* entry = nullptr;         ///< the registry entry named by config.json
  std::map<std::string, std::string> files;  ///< every embedded file besides config.json, by name

  /// The embedded file `name`, or a std::runtime_error naming this model's path.
  const std::string& file(const std::string& name) const;
};

/// Writes `module` (in eval mode; a portable build: nn::Runtime) with `config` and `files`
/// embedded, atomically.
void save_model(const std::string& path, torch::jit::Module& module, const nlohmann::json& config,
                const std::map<std::string, std::string>& files);

/// Copies every parameter and buffer of `from` into `to`'s of the same name (two builds of one
/// model: the native module attn trains and the portable one it saves). Throws std::logic_error
/// when the two do not have the same tensors.
void copy_weights(const torch::jit::Module& from, torch::jit::Module& to);

/// Loads model.pt, or RUN_DIR/model.pt when `path` is a directory: the module, its config.json and
/// every other embedded file. Errors name the file and what is missing or corrupt: not a
/// TorchScript file, no config.json, an unknown model name, a module without its kind's methods.
/// With nn::Runtime::kNative, `module` is the registry's native build with the file's weights when
/// the file's model_revision is the registry's (else the file's module, which computes what was
/// saved).
SavedModel load_model(const std::string& path, nn::Runtime runtime);

}  // namespace attn::models
