#include "attn/models/saved_model.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <torch/torch.h>

namespace attn::models {

void save_model(const std::string& path, torch::jit::Module& module, const nlohmann::json& config,
                const std::map<std::string, std::string>& files) {
  const bool was_training = module.is_training();
  module.eval();
  torch::jit::ExtraFilesMap extra{{"config.json", config.dump(2)}};
  for (const auto& [name, content] : files) extra[name] = content;
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

const text::Tokenizer& SavedModel::require_tokenizer() const {
  if (!tokenizer) throw std::runtime_error(path + ": no embedded tokenizer.json (a " + config.value("model", std::string("?")) + " model)");
  return *tokenizer;
}

const text::Tokenizer& SavedModel::require_target_tokenizer() const {
  if (!target_tokenizer) throw std::runtime_error(path + ": no embedded target_tokenizer.json: not a seq2seq model");
  return *target_tokenizer;
}

SavedModel load_model(const std::string& given) {
  SavedModel m;
  m.path = given;
  if (std::filesystem::is_directory(m.path)) m.path = (std::filesystem::path(m.path) / "model.pt").string();
  const std::string& path = m.path;
  if (!std::filesystem::exists(path)) throw std::runtime_error(path + ": no such file (train a model first: attn train)");
  torch::jit::ExtraFilesMap extra{{"config.json", ""}};
  for (const char* name : kModelFiles) extra[name] = "";
  try {
    m.module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a TorchScript model file (" +
                             std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  if (extra["config.json"].empty()) throw std::runtime_error(path + ": no embedded config.json: not a model saved by attn");
  try {
    m.config = nlohmann::json::parse(extra["config.json"]);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": embedded config.json is not valid JSON");
  }
  if (!m.config.contains("model") || !m.config.contains("model_config") || !m.config.contains("data"))
    throw std::runtime_error(path + ": embedded config.json: keys 'model', 'model_config' and 'data' are required");
  try {
    m.task = find_model(m.config.at("model").get<std::string>()).task;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": embedded config.json: key 'model': " + e.what());
  }
  for (const char* name : kModelFiles)
    if (!extra[name].empty()) m.files[name] = extra[name];
  if (!extra["tokenizer.json"].empty())
    m.tokenizer = text::Tokenizer::from_json(extra["tokenizer.json"], path + ":tokenizer.json");
  if (!extra["target_tokenizer.json"].empty())
    m.target_tokenizer = text::Tokenizer::from_json(extra["target_tokenizer.json"], path + ":target_tokenizer.json");
  // What each task's commands read from the embedded config.json.
  const nlohmann::json& data = m.config.at("data");
  std::vector<const char*> keys;
  if (m.task == TaskKind::kTextClassification) keys = {"labels", "maxlen"};
  if (m.task == TaskKind::kFeatureClassification) keys = {"features"};
  for (const char* key : keys)
    if (!data.is_object() || !data.contains(key))
      throw std::runtime_error(path + ": embedded config.json: key 'data." + key + "' is required");
  if (m.task != TaskKind::kFeatureClassification && !m.tokenizer)
    throw std::runtime_error(path + ": no embedded tokenizer.json: not a complete " + m.config.at("model").get<std::string>() + " model");
  if (m.task == TaskKind::kSequenceToSequence && !m.target_tokenizer)
    throw std::runtime_error(path + ": no embedded target_tokenizer.json: not a complete seq2seq model");
  m.module.eval();
  return m;
}

}  // namespace attn::models
