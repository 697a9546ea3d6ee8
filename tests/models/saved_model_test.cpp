// model.pt: the module with config.json and the task's files embedded; every error names the file.
#include <fstream>

#include "attn/io/atomic_file.h"
#include "attn/models/saved_model.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("save_model / load_model: the module, config.json and every embedded file", "[models][saved]") {
  const auto dir = scratch("saved");
  torch::jit::Module m = build("feature-attention", {{"features", 4}});
  m.train();
  const nlohmann::json config = {{"model", "feature-attention"}, {"model_config", {{"features", 4}}}, {"data", {{"features", {"a", "b", "c", "d"}}}}};
  const std::string path = (dir / "model.pt").string();
  models::save_model(path, m, config, {{"notes.txt", "hello"}, {"tokenizer.json", "{}"}});
  CHECK(m.is_training());  // saving does not change the module's mode
  const models::SavedModel loaded = models::load_model(dir.string());  // a run directory holds model.pt
  CHECK(loaded.path == path);
  CHECK(loaded.entry->name == "feature-attention");
  CHECK(loaded.config == config);
  CHECK(loaded.files == std::map<std::string, std::string>{{"notes.txt", "hello"}, {"tokenizer.json", "{}"}});
  CHECK(loaded.file("notes.txt") == "hello");
  CHECK_THROWS_WITH(loaded.file("target_tokenizer.json"), Catch::Contains(path) && Catch::Contains("no embedded target_tokenizer.json"));
  CHECK_FALSE(loaded.module.is_training());
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_model: errors name the file and what is wrong", "[models][saved]") {
  const auto dir = scratch("saved_bad");
  const std::string junk = (dir / "junk.pt").string();
  io::write_file_atomic(junk, "not a zip");
  CHECK_THROWS_WITH(models::load_model(junk), Catch::StartsWith(junk + ": not a TorchScript model file"));
  CHECK_THROWS_WITH(models::load_model((dir / "none.pt").string()), Catch::Contains("none.pt: no such file"));
  torch::jit::Module m = build("feature-attention", {{"features", 4}});
  const std::string bare = (dir / "bare.pt").string();
  m.save(bare);
  CHECK_THROWS_WITH(models::load_model(bare), Catch::Contains("bare.pt: no embedded config.json"));
  const std::string unknown = (dir / "unknown.pt").string();
  models::save_model(unknown, m, {{"model", "gpt"}, {"model_config", {}}, {"data", {}}}, {});
  CHECK_THROWS_WITH(models::load_model(unknown), Catch::Contains("unknown.pt: embedded config.json: key 'model'") &&
                                                     Catch::Contains("unknown model 'gpt'"));
  const std::string mismatched = (dir / "mismatched.pt").string();  // a feature model called a seq2seq one
  models::save_model(mismatched, m, {{"model", "seq2seq-attention"}, {"model_config", {}}, {"data", {}}}, {});
  CHECK_THROWS_WITH(models::load_model(mismatched), Catch::Contains("mismatched.pt: the model has no TorchScript method 'translate'"));
  std::filesystem::remove_all(dir);
}
