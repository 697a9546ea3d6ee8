#include "attn/models/saved_model.h"

#include <filesystem>
#include <stdexcept>

#include <caffe2/serialize/inline_container.h>

#include "attn/io/atomic_file.h"
#include "attn/nn/script_module.h"

namespace attn::models {
namespace {

constexpr const char* kConfig = "config.json";

/// The names of the extra files in a TorchScript archive ("extra/NAME" records).
std::vector<std::string> extra_file_names(const std::string& path) {
  std::vector<std::string> names;
  caffe2::serialize::PyTorchStreamReader reader(path);
  for (const std::string& record : reader.getAllRecords()) {
    const std::size_t slash = record.find("extra/");
    if (slash != std::string::npos && record.find('/', slash + 6) == std::string::npos) names.push_back(record.substr(slash + 6));
  }
  return names;
}

}  // namespace

const std::string& SavedModel::file(const std::string& name) const {
  const auto it = files.find(name);
  if (it == files.end())
    throw std::runtime_error(path + ": no embedded " + name + " (a " + config.value("model", std::string("?")) + " model needs it)");
  return it->second;
}

void save_model(const std::string& path, torch::jit::Module& module, const nlohmann::json& config,
                const std::map<std::string, std::string>& files) {
  torch::jit::ExtraFilesMap extra{{kConfig, config.dump(2)}};
  for (const auto& [name, content] : files) extra[name] = content;
  nn::EvalModeGuard eval(module);
  io::write_atomic(path, [&](const std::string& tmp) {
    try {
      module.save(tmp, extra);
    } catch (const c10::Error& e) {
      throw std::runtime_error(path + ": cannot write: " + e.what_without_backtrace());
    }
  });
}

SavedModel load_model(const std::string& given) {
  SavedModel m;
  m.path = std::filesystem::is_directory(given) ? (std::filesystem::path(given) / "model.pt").string() : given;
  const std::string& path = m.path;
  if (!std::filesystem::exists(path)) throw std::runtime_error(path + ": no such file (train a model first: attn train)");
  torch::jit::ExtraFilesMap extra;
  try {
    for (const std::string& name : extra_file_names(path)) extra[name] = "";
    m.module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a TorchScript model file (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  if (extra[kConfig].empty()) throw std::runtime_error(path + ": no embedded config.json: not a model saved by attn");
  try {
    m.config = nlohmann::json::parse(extra[kConfig]);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": embedded config.json is not valid JSON");
  }
  if (!m.config.is_object() || !m.config.contains("model") || !m.config.contains("model_config") || !m.config.contains("data"))
    throw std::runtime_error(path + ": embedded config.json: keys 'model', 'model_config' and 'data' are required");
  try {
    m.entry = &find_model(m.config.at("model").get<std::string>());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": embedded config.json: key 'model': " + e.what());
  }
  require_interface(m.entry->kind, m.module, path);
  for (auto& [name, content] : extra)
    if (name != kConfig) m.files[name] = std::move(content);
  m.module.eval();
  return m;
}

}  // namespace attn::models
