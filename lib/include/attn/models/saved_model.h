#pragma once
/// A trained model in one file: the TorchScript module (model.pt) with the run's config.json and
/// its task's files embedded as extra files (tokenizer.json for text and seq2seq models,
/// target_tokenizer.json for seq2seq), so explaining or evaluating needs nothing else, in attn or
/// in Python (torch.jit.load(path, _extra_files={"config.json": "", "tokenizer.json": ""})).
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "attn/models/registry.h"
#include "attn/text/tokenizer.h"

namespace attn::models {

/// The extra files a model.pt may carry besides config.json.
inline const char* const kModelFiles[] = {"tokenizer.json", "target_tokenizer.json"};

struct SavedModel {
  std::string path;
  torch::jit::Module module;
  nlohmann::json config;  ///< the run's config.json: "model", "model_config", "data", "training"
  TaskKind task = TaskKind::kTextClassification;
  std::optional<text::Tokenizer> tokenizer;         ///< text: the words; seq2seq: the source characters
  std::optional<text::Tokenizer> target_tokenizer;  ///< seq2seq: the target characters
  std::map<std::string, std::string> files;          ///< the embedded files besides config.json, as stored

  /// The tokenizer, or an error naming the file when the model has none.
  const text::Tokenizer& require_tokenizer() const;
  const text::Tokenizer& require_target_tokenizer() const;
};

/// Writes `module` (in eval mode) with `config` and `files` embedded, atomically.
void save_model(const std::string& path, torch::jit::Module& module, const nlohmann::json& config,
                const std::map<std::string, std::string>& files);

/// Loads model.pt, or RUN_DIR/model.pt when `path` is a directory. Errors name the file and what
/// is missing or corrupt.
SavedModel load_model(const std::string& path);

}  // namespace attn::models
