#pragma once
/// A trained model in one file: the TorchScript module (model.pt) with the run's config.json and
/// tokenizer.json embedded as extra files, so explaining or evaluating needs nothing else, in attn
/// or in Python (torch.jit.load(path, _extra_files={"config.json": "", "tokenizer.json": ""})).
#include <string>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "attn/text/tokenizer.h"

namespace attn::models {

struct SavedModel {
  torch::jit::Module module;
  nlohmann::json config;  ///< the run's config.json: "model", "model_config", "data", "training"
  text::Tokenizer tokenizer;
};

/// Writes `module` (in eval mode) with `config` and `tokenizer` embedded, atomically.
void save_model(const std::string& path, torch::jit::Module& module, const nlohmann::json& config,
                const text::Tokenizer& tokenizer);

/// Loads model.pt, or RUN_DIR/model.pt when `path` is a directory. Errors name the file and what
/// is missing or corrupt.
SavedModel load_model(const std::string& path);

}  // namespace attn::models
