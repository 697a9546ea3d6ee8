#include "attn/models/saved_model.h"

#include <filesystem>
#include <future>
#include <sstream>
#include <stdexcept>

#include <ATen/Parallel.h>
#include <caffe2/serialize/inline_container.h>

#include "attn/io/atomic_file.h"
#include "attn/io/checksum.h"
#include "attn/io/tensors.h"
#include "attn/models/ensemble.h"
#include "attn/nn/script_module.h"

namespace attn::models {
namespace {

constexpr const char* kConfig = "config.json";
constexpr const char* kChecksums = "checksums.json";

/// Every tensor's checksum, by name (parameters, then buffers).
std::map<std::string, std::string> tensor_checksums(const torch::jit::Module& module) {
  std::map<std::string, std::string> out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) out[p.name] = io::tensor_checksum(p.value);
  for (const auto& b : module.named_buffers(/*recurse=*/true)) out[b.name] = io::tensor_checksum(b.value);
  return out;
}

/// checksums.json: a CRC-32 of every tensor and every embedded file, so that one flipped bit is
/// noticed on load (torch.jit.load in Python ignores the file).
std::string checksums_json(const torch::jit::Module& module, const torch::jit::ExtraFilesMap& files) {
  nlohmann::json j = {{"format", "attn.checksums/1"}, {"algorithm", "crc32"}, {"tensors", tensor_checksums(module)}};
  j["files"] = nlohmann::json::object();
  for (const auto& [name, content] : files) j["files"][name] = io::crc32_hex(content);
  return j.dump(1);
}

/// Compares a loaded model with its checksums.json; a mismatch names the file and the tensor.
void verify(const std::string& path, const torch::jit::Module& module, const torch::jit::ExtraFilesMap& extra) {
  const auto it = extra.find(kChecksums);
  if (it == extra.end() || it->second.empty()) {
    io::warn(path + ": carries no checksums (saved before attn 0.2): a corrupt file cannot be told from a good one");
    return;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(it->second);
    (void)j.at("tensors").items();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path + ": embedded checksums.json is not valid: the file is corrupt");
  }
  const auto actual = tensor_checksums(module);
  for (const auto& [name, sum] : actual)
    if (!j["tensors"].contains(name) || j["tensors"][name] != sum)
      throw std::runtime_error(path + ": tensor '" + name + "' does not match its checksum: the file is corrupt");
  if (j["tensors"].size() != actual.size()) throw std::runtime_error(path + ": tensors are missing: the file is corrupt");
  for (const auto& [name, content] : extra)
    if (name != kChecksums && (!j.contains("files") || !j["files"].contains(name) || j["files"][name] != io::crc32_hex(content)))
      throw std::runtime_error(path + ": embedded file '" + name + "' does not match its checksum: the file is corrupt");
}

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
  for (const auto& [name, content] : files)
    if (name != kChecksums) extra[name] = content;
  extra[kChecksums] = checksums_json(module, extra);
  nn::EvalModeGuard eval(module);
  // Serialised in memory first: LibTorch's file writer aborts the process when a write fails
  // (its destructor throws), whereas write_file_atomic reports the failure and keeps the old file.
  std::ostringstream bytes;
  try {
    module.save(bytes, extra);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": cannot serialise the model: " + e.what_without_backtrace());
  }
  io::write_file_atomic(path, bytes.str(), io::Durability::kToDisk);
}

void copy_weights(const torch::jit::Module& from, torch::jit::Module& to) {
  std::map<std::string, torch::Tensor> source;
  for (const auto& p : from.named_parameters(/*recurse=*/true)) source[p.name] = p.value;
  for (const auto& b : from.named_buffers(/*recurse=*/true)) source[b.name] = b.value;
  std::size_t copied = 0;
  torch::NoGradGuard no_grad;
  const auto copy = [&](const std::string& name, torch::Tensor& target) {
    const auto it = source.find(name);
    if (it == source.end() || !it->second.sizes().equals(target.sizes()))
      throw std::logic_error("copy_weights: '" + name + "' is not in the other module, or has another shape");
    target.copy_(it->second);
    ++copied;
  };
  for (const auto& p : to.named_parameters(/*recurse=*/true)) {
    torch::Tensor t = p.value;
    copy(p.name, t);
  }
  for (const auto& b : to.named_buffers(/*recurse=*/true)) {
    torch::Tensor t = b.value;
    copy(b.name, t);
  }
  if (copied != source.size()) throw std::logic_error("copy_weights: the modules do not have the same tensors");
}

/// Reads `m`'s embedded config and finds its registry entry; with the native runtime, rebuilds the
/// module natively (when the file's model revision is this build's) with the loaded weights.
void use_config(SavedModel& m, const std::string& config, nn::Runtime runtime) {
  const std::string& path = m.path;
  try {
    m.config = nlohmann::json::parse(config);
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
  const nlohmann::json& revision = m.config.contains("model_revision") ? m.config["model_revision"] : nlohmann::json();
  if (runtime == nn::Runtime::kNative && revision.is_number_integer() && revision.get<int>() == m.entry->revision) {
    try {
      m.module =
          build_model(*m.entry, resolve_config(*m.entry, m.config.at("model_config")), ensemble_size(m.config), nn::Runtime::kNative);
      copy_weights(m.portable, m.module);
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": embedded config.json: key 'model_config' does not describe the model in the file (" + e.what() +
                               ")");
    }
    m.module.eval();
  }
}

SavedModel load_model(const std::string& given, nn::Runtime runtime) {
  SavedModel m;
  m.path = std::filesystem::is_directory(given) ? (std::filesystem::path(given) / "model.pt").string() : given;
  const std::string& path = m.path;
  if (!std::filesystem::exists(path)) throw std::runtime_error(path + ": no such file (train a model first: attn train)");
  io::check_archive(path, "a TorchScript model file");
  torch::jit::ExtraFilesMap extra;
  try {
    for (const std::string& name : extra_file_names(path)) extra[name] = "";
    m.module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a TorchScript model file (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(path + ": not a TorchScript model file (it claims more memory than there is)");
  }
  for (const auto& p : m.module.named_parameters(/*recurse=*/true)) io::require_in_storage(p.value, path, p.name);
  for (const auto& b : m.module.named_buffers(/*recurse=*/true)) io::require_in_storage(b.value, path, b.name);
  if (extra[kConfig].empty()) throw std::runtime_error(path + ": no embedded config.json: not a model saved by attn");
  m.module.eval();
  m.portable = m.module;
  // The checksums (a CRC of every byte loaded) are compared on a second thread while this one reads
  // the config and builds the native module; a mismatch is the error reported, whatever else failed.
  const bool alongside = at::get_num_threads() > 1;
  std::future<void> verified = std::async(alongside ? std::launch::async : std::launch::deferred,
                                          [&path, module = m.portable, &extra] { verify(path, module, extra); });
  try {
    use_config(m, extra.at(kConfig), runtime);
  } catch (...) {
    verified.get();
    throw;
  }
  verified.get();
  for (auto& [name, content] : extra)
    if (name != kConfig && name != kChecksums) m.files[name] = std::move(content);
  return m;
}

}  // namespace attn::models
