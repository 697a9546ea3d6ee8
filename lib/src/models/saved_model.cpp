#include "attn/models/saved_model.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <torch/torch.h>

namespace attn::models {

void save_model(const std::string& path, torch::jit::Module& module, const nlohmann::json& config,
                const text::Tokenizer& tokenizer) {
  const bool was_training = module.is_training();
  module.eval();
  torch::jit::ExtraFilesMap extra{{"config.json", config.dump(2)}, {"tokenizer.json", tokenizer.to_json()}};
  const std::string tmp = path + ".tmp";
  try {
    module.save(tmp, extra);
  } catch (const c10::Error& e) {
    module.train(was_training);
    throw std::runtime_error(path + ": cannot write: " + e.what_without_backtrace());
  }
  module.train(was_training);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error(path + ": cannot write");
}

SavedModel load_model(const std::string& given) {
  std::string path = given;
  if (std::filesystem::is_directory(path)) path = (std::filesystem::path(path) / "model.pt").string();
  if (!std::filesystem::exists(path)) throw std::runtime_error(path + ": no such file (train a model first: attn train)");
  torch::jit::ExtraFilesMap extra{{"config.json", ""}, {"tokenizer.json", ""}};
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a TorchScript model file (" +
                             std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  if (extra["config.json"].empty() || extra["tokenizer.json"].empty())
    throw std::runtime_error(path + ": no embedded config.json/tokenizer.json: not a model saved by attn");
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(extra["config.json"]);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": embedded config.json is not valid JSON");
  }
  if (!config.contains("model") || !config.contains("model_config"))
    throw std::runtime_error(path + ": embedded config.json: keys 'model' and 'model_config' are required");
  module.eval();
  return SavedModel{module, config, text::Tokenizer::from_json(extra["tokenizer.json"], path + ":tokenizer.json")};
}

}  // namespace attn::models
