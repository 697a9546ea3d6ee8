// The model store (server/src/models.h) on small generated model files: a set loaded and described
// as /v1/models says, names refused, a corrupt file refused by name, reloads swapped in only when sound.
#include <openssl/evp.h>

#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "api.h"
#include "models.h"
#include "server_test_util.h"

using attn::server::Loaded;
using attn::server::ModelStore;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  REQUIRE(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) == 1);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += {"0123456789abcdef"[digest[i] >> 4], "0123456789abcdef"[digest[i] & 15]};
  return hex;
}

/// ModelStore::reload as a future: the fresh load, or the error's message.
struct ReloadOutcome {
  std::shared_ptr<const Loaded> fresh;
  std::string error;
};
std::future<ReloadOutcome> reload_of(ModelStore& store, std::size_t model) {
  auto promise = std::make_shared<std::promise<ReloadOutcome>>();
  auto future = promise->get_future();
  store.reload(model, [promise](std::shared_ptr<const Loaded> fresh, std::exception_ptr error) {
    ReloadOutcome out{std::move(fresh), ""};
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        out.error = e.what();
      }
    }
    promise->set_value(out);
  });
  return future;
}

}  // namespace

TEST_CASE("a model set loads once per inference thread, named and described as /v1/models says", "[server][models]") {
  const auto dir = tasks_test::scratch("server_models_set");
  const std::string first = server_test::feature_model(dir / "first"), second = server_test::feature_model(dir / "second", 2);
  ModelStore store({"a=" + first, second + "/model.pt"}, 2, 8, 16);  // the second named after its run directory
  CHECK(store.size() == 2);
  CHECK(store.name(0) == "a");
  CHECK(store.name(1) == "second");
  CHECK(store.names() == "a, second");
  CHECK(store.find("second") == std::optional<std::size_t>(1));
  CHECK_FALSE(store.find("first"));
  std::vector<std::string> log;
  store.load([&log](const std::string& line) { log.push_back(line); });
  REQUIRE(log.size() == 2);
  CHECK_THAT(log[0], Catch::StartsWith("loaded a: feature-attention from " + first + " (sha256 "));
  const auto loaded = store.current(0);
  REQUIRE(loaded->copies.size() == 2);  // one per inference thread, not shared
  CHECK(loaded->copies[0] != loaded->copies[1]);
  const std::vector<attn::tasks::Input> rows = {{"", {0.5f, 0.1f}}, {"", {0.0f, 0.4f}}};
  CHECK(nlohmann::ordered_json(loaded->copies[0]->predict(rows, 8)) == nlohmann::ordered_json(loaded->copies[1]->predict(rows, 8)));
  const auto& info = loaded->info;
  for (const auto& field : attn::server::schemas().model_info.at("required")) CHECK(info.contains(field.get<std::string>()));
  CHECK(info.at("name") == "a");
  CHECK(info.at("model") == "feature-attention");
  CHECK(info.at("input") == "rows");
  CHECK(info.at("path") == "model.pt");  // the file's name, not where the server keeps it
  CHECK(info.at("sha256") == sha256_hex(file_bytes(first + "/model.pt")));
  CHECK(log[0].find(info.at("sha256").get<std::string>().substr(0, 12)) != std::string::npos);
  CHECK(info.at("max_steps") == 16);
  CHECK(info.at("default_steps") == std::min(attn::models::kDefaultSteps, 16));
  CHECK(info.at("methods").size() > 0);
  CHECK(info.at("examples").size() > 0);
  CHECK(store.current(1)->info.at("name") == "second");
  CHECK(store.current(1)->info.at("sha256") != info.at("sha256"));  // other weights, another file
  tasks_test::fs::remove_all(dir);
}

TEST_CASE("model names: none, a repeated one or an unusable argument are refused naming --model", "[server][models]") {
  CHECK_THROWS_WITH(ModelStore({}, 1, 8, 16), Catch::Contains("--model NAME=PATH is required"));
  CHECK_THROWS_WITH(ModelStore({"a=/x/model.pt", "b=/y/model.pt", "a=/z/model.pt"}, 1, 8, 16),
                    Catch::Contains("two models are called 'a'"));
  CHECK_THROWS_WITH(ModelStore({"runs/toxic", "other=/x/model.pt", "/y/toxic/model.pt"}, 1, 8, 16),
                    Catch::Contains("two models are called 'toxic'"));  // named after their run directories
  CHECK_THROWS_WITH(ModelStore({"=/x/model.pt"}, 1, 8, 16), Catch::Contains("--model: expected NAME=PATH"));
}

TEST_CASE("a corrupt or missing model file is refused with an error naming the model and its file", "[server][models]") {
  const auto dir = tasks_test::scratch("server_models_corrupt");
  const std::string good = server_test::feature_model(dir / "good");
  const std::string corrupt = (dir / "corrupt.pt").string();
  std::string bytes = file_bytes(good + "/model.pt");
  std::ofstream(corrupt, std::ios::binary) << bytes.substr(0, bytes.size() / 2);  // cut short
  const std::string missing = (dir / "missing.pt").string();
  for (const auto& [name, path] : {std::make_pair(std::string("cut"), corrupt), std::make_pair(std::string("gone"), missing)}) {
    ModelStore store({"good=" + good, name + "=" + path}, 1, 8, 16);
    std::vector<std::string> log;
    CHECK_THROWS_AS(store.load([&log](const std::string& line) { log.push_back(line); }), std::runtime_error);
    CHECK_THROWS_WITH(store.load([](const std::string&) {}), Catch::StartsWith("model '" + name + "' (" + path + "): "));
    CHECK(log.size() == 1);  // the good one loaded, then the bad one stopped the load
  }
  tasks_test::fs::remove_all(dir);
}

TEST_CASE("a reload swaps in the file's new contents once installed; a failed one leaves the loaded model serving", "[server][models]") {
  const auto dir = tasks_test::scratch("server_models_reload");
  const std::string run = server_test::feature_model(dir / "run");
  ModelStore store({"m=" + run, "n=" + server_test::feature_model(dir / "other", 3)}, 1, 8, 16);
  store.load([](const std::string&) {});
  const auto before = store.current(0);
  // A new file: read and checked on the loader thread, then served only once installed.
  server_test::feature_model(dir / "run", 2);
  const ReloadOutcome swapped = reload_of(store, 0).get();
  REQUIRE(swapped.error.empty());
  REQUIRE(swapped.fresh);
  CHECK(swapped.fresh->info.at("sha256") == sha256_hex(file_bytes(run + "/model.pt")));
  CHECK(swapped.fresh->info.at("sha256") != before->info.at("sha256"));
  CHECK(store.current(0) == before);
  store.install(0, swapped.fresh);
  CHECK(store.current(0) == swapped.fresh);
  // A corrupt file: the error names the model, the loaded one stays.
  std::ofstream(run + "/model.pt", std::ios::binary | std::ios::trunc) << "not a model";
  const ReloadOutcome failed = reload_of(store, 0).get();
  CHECK_FALSE(failed.fresh);
  CHECK_THAT(failed.error, Catch::StartsWith("model 'm' (" + run + "): "));
  CHECK(store.current(0) == swapped.fresh);
  CHECK(store.current(0)->copies.front()->predict({{"", {0.5f, 0.1f}}}, 8).size() == 1);
  // Reloads run one at a time, in the order asked.
  struct Order {
    std::mutex mutex;
    std::vector<std::size_t> models;
    std::promise<void> all;
  };
  const auto order = std::make_shared<Order>();  // (the loader thread's callbacks share it)
  for (std::size_t model : {std::size_t{1}, std::size_t{0}, std::size_t{1}})
    store.reload(model, [order, model](std::shared_ptr<const Loaded>, std::exception_ptr) {
      std::unique_lock<std::mutex> lock(order->mutex);
      order->models.push_back(model);
      const bool last = order->models.size() == 3;
      lock.unlock();
      if (last) order->all.set_value();
    });
  order->all.get_future().wait();
  CHECK(order->models == std::vector<std::size_t>{1, 0, 1});
  tasks_test::fs::remove_all(dir);
}
