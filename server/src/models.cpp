#include "models.h"

#include <condition_variable>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <openssl/evp.h>

#include "attn/server/server.h"
#include "attn/tasks/command.h"

namespace attn::server {

using json = nlohmann::ordered_json;

namespace {

/// SHA-256 of a file, as hex (the model file's digest in /v1/models).
std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read it");
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("SHA-256 (OpenSSL) failed");
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    EVP_DigestUpdate(ctx.get(), chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  static const char* const kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += {kHex[digest[i] >> 4], kHex[digest[i] & 15]};
  return hex;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

}  // namespace

/// The one thread that loads reloaded models. glibc gives each thread its own heap and the server
/// keeps freed memory (the app's profile), so loads on whichever thread asked grew another heap by a
/// model's size each time, up to one per heap (measured: +7.7 MB per reload for the first 13
/// reloads); loads on one thread reuse one heap.
class ModelStore::Loader {
 public:
  Loader() : thread_([this] { loop(); }) {}
  ~Loader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void run(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // (last: started once the rest is ready)
};

ModelStore::ModelStore(const std::vector<std::string>& arguments, int copies, std::int64_t max_batch, int max_steps)
    : copies_(copies), max_batch_(max_batch), max_steps_(max_steps), loader_(std::make_unique<Loader>()) {
  for (const std::string& argument : arguments) {
    auto [name, path] = parse_model_argument(argument);
    if (find(name)) throw std::invalid_argument("--model: two models are called '" + name + "'");
    models_.push_back({name, path, nullptr});
  }
  if (models_.empty()) throw std::invalid_argument("--model NAME=PATH is required (one or more)");
}

ModelStore::~ModelStore() = default;

void ModelStore::load(const std::function<void(const std::string&)>& log) {
  for (Model& m : models_) {
    m.loaded = load_file(m);
    const json& info = m.loaded->info;
    log("loaded " + m.name + ": " + info.at("model").get<std::string>() + " from " + m.path + " (sha256 " +
        info.at("sha256").get<std::string>().substr(0, 12) + ")");
  }
}

std::optional<std::size_t> ModelStore::find(const std::string& name) const {
  for (std::size_t i = 0; i < models_.size(); ++i)
    if (models_[i].name == name) return i;
  return std::nullopt;
}

std::string ModelStore::names() const {
  std::string out;
  for (const Model& m : models_) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

std::shared_ptr<const Loaded> ModelStore::current(std::size_t model) const { return std::atomic_load(&models_.at(model).loaded); }

void ModelStore::reload(std::size_t model, Reloaded done) {
  loader_->run([this, model, done = std::move(done)] {
    std::shared_ptr<const Loaded> fresh;
    try {
      fresh = load_file(models_.at(model));
    } catch (...) {
      return done(nullptr, std::current_exception());
    }
    done(fresh, nullptr);
  });
}

void ModelStore::install(std::size_t model, std::shared_ptr<const Loaded> fresh) {
  std::atomic_store(&models_.at(model).loaded, std::move(fresh));
}

std::shared_ptr<const Loaded> ModelStore::load_file(const Model& m) const {
  auto loaded = std::make_shared<Loaded>();
  try {
    for (int w = 0; w < copies_; ++w) loaded->copies.push_back(tasks::open_model(m.path));
    tasks::TrainedModel& first = *loaded->copies.front();
    const std::vector<tasks::Input> warm = first.read_inputs(first.examples(), data::Inputs{}, nullptr);
    for (const auto& copy : loaded->copies) {
      copy->predict(warm, max_batch_);
      copy->explain(warm, max_batch_);
    }
    const models::SavedModel& saved = first.saved();
    json& info = loaded->info;
    // The file's name, not its path: /v1/models tells a caller which file, not where the server keeps it.
    info = {{"name", m.name},
            {"model", saved.entry->name},
            {"path", std::filesystem::path(saved.path).filename().string()},
            {"sha256", file_sha256(saved.path)},
            {"loaded_at", utc_now()}};
    const json described = first.describe();
    for (const auto& [key, value] : described.items()) info[key] = value;
    info["config"] = saved.config.at("model_config");
    info["methods"] = json::array();
    for (models::Method method : first.methods()) info["methods"].push_back(models::method_name(method));
    info["default_steps"] = std::min(models::kDefaultSteps, max_steps_);
    info["max_steps"] = max_steps_;
    info["examples"] = first.examples();
  } catch (const std::exception& e) {
    throw std::runtime_error("model '" + m.name + "' (" + m.path + "): " + e.what());
  }
  return loaded;
}

}  // namespace attn::server
