// model.pt: the module with config.json and the task's files embedded; every error names the file.
#include <filesystem>
#include <fstream>

#include <ATen/Parallel.h>

#include "attn/io/atomic_file.h"
#include "attn/io/checksum.h"
#include "attn/models/saved_model.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("save_model / load_model: the module, config.json and every embedded file", "[models][saved]") {
  const auto dir = scratch("saved");
  torch::jit::Module m = build("feature-attention", {{"features", 4}});
  m.train();
  const nlohmann::json config = {
      {"model", "feature-attention"}, {"model_config", {{"features", 4}}}, {"data", {{"features", {"a", "b", "c", "d"}}}}};
  const std::string path = (dir / "model.pt").string();
  models::save_model(path, m, config, {{"notes.txt", "hello"}, {"tokenizer.json", "{}"}});
  CHECK(m.is_training());                                                                      // saving does not change the module's mode
  const models::SavedModel loaded = models::load_model(dir.string(), nn::Runtime::kPortable);  // a run directory holds model.pt
  CHECK(loaded.path == path);
  CHECK(loaded.entry->name == "feature-attention");
  CHECK(loaded.config == config);
  CHECK(loaded.files == std::map<std::string, std::string>{{"notes.txt", "hello"}, {"tokenizer.json", "{}"}});
  CHECK(loaded.file("notes.txt") == "hello");
  CHECK_THROWS_WITH(loaded.file("target_tokenizer.json"), Catch::Contains(path) && Catch::Contains("no embedded target_tokenizer.json"));
  CHECK_FALSE(loaded.module.is_training());
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_model kNative: the registry's native build with the file's weights, for the file's revision only", "[models][saved]") {
  const auto dir = scratch("native");
  const nlohmann::json model_config = {{"num_words", 30}, {"labels", 2}, {"embed_dim", 6}, {"lstm_units", 3}};
  torch::jit::Module m = build("bilstm-attention", model_config);
  nlohmann::json config = {{"model", "bilstm-attention"},
                           {"model_config", model_config},
                           {"data", nlohmann::json::object()},
                           {"model_revision", models::find_model("bilstm-attention").revision}};
  const std::string current = (dir / "current.pt").string(), older = (dir / "older.pt").string();
  models::save_model(current, m, config, {});
  config.erase("model_revision");  // a file from before revisions: runs as saved
  models::save_model(older, m, config, {});
  const torch::Tensor ids = torch::tensor({{0, 0, 5, 7, 9}, {3, 4, 1, 2, 8}}, torch::kInt64);
  const auto expected = pair_of(m.forward({ids}));
  models::SavedModel native = models::load_model(current, nn::Runtime::kNative);
  CHECK_FALSE(native.module.is_training());
  const auto got = pair_of(native.module.forward({ids}));
  CHECK(torch::allclose(got.first, expected.first, 1e-5, 1e-6));
  CHECK(torch::allclose(got.second, expected.second, 1e-5, 1e-6));
  CHECK(native.module.attr("lstm").toModule().type()->name()->name() == "BiLSTMNative");
  models::SavedModel old = models::load_model(older, nn::Runtime::kNative);
  CHECK(old.module.attr("lstm").toModule().type()->name()->name() == "BiLSTM");  // the file's own module
  std::filesystem::remove_all(dir);
}

TEST_CASE("load_model: errors name the file and what is wrong", "[models][saved]") {
  const auto dir = scratch("saved_bad");
  const std::string junk = (dir / "junk.pt").string();
  io::write_file_atomic(junk, "not a zip");
  CHECK_THROWS_WITH(models::load_model(junk, nn::Runtime::kPortable), Catch::StartsWith(junk + ": not a TorchScript model file"));
  CHECK_THROWS_WITH(models::load_model((dir / "none.pt").string(), nn::Runtime::kPortable), Catch::Contains("none.pt: no such file"));
  torch::jit::Module m = build("feature-attention", {{"features", 4}});
  const std::string bare = (dir / "bare.pt").string();
  m.save(bare);
  CHECK_THROWS_WITH(models::load_model(bare, nn::Runtime::kPortable), Catch::Contains("bare.pt: no embedded config.json"));
  const std::string unknown = (dir / "unknown.pt").string();
  models::save_model(unknown, m, {{"model", "gpt"}, {"model_config", {}}, {"data", {}}}, {});
  CHECK_THROWS_WITH(models::load_model(unknown, nn::Runtime::kPortable),
                    Catch::Contains("unknown.pt: embedded config.json: key 'model'") && Catch::Contains("unknown model 'gpt'"));
  const std::string mismatched = (dir / "mismatched.pt").string();  // a feature model called a seq2seq one
  models::save_model(mismatched, m, {{"model", "seq2seq-attention"}, {"model_config", {}}, {"data", {}}}, {});
  CHECK_THROWS_WITH(models::load_model(mismatched, nn::Runtime::kPortable),
                    Catch::Contains("mismatched.pt: the model has no TorchScript method 'translate'"));
  std::filesystem::remove_all(dir);
}

namespace {
std::vector<std::string> g_warnings;
void collect(const std::string& w) { g_warnings.push_back(w); }

/// Flips one bit of the first place `needle` stands in the file; false when it is not there.
bool flip_bit_of(const std::string& path, const std::string& needle, std::size_t byte) {
  std::string bytes = io::read_file(path);
  const std::size_t at = bytes.find(needle);
  if (at == std::string::npos) return false;
  bytes[at + byte] = static_cast<char>(bytes[at + byte] ^ 0x10);
  std::ofstream(path, std::ios::binary) << bytes;
  return true;
}
/// Flips one bit in the middle of the bytes of the archive's record `name` (found by its local header).
bool flip_record_bit(const std::string& path, const std::string& name) {
  std::string bytes = io::read_file(path);
  const std::size_t at = bytes.find(name);
  if (at == std::string::npos || at < 30) return false;
  const auto u16 = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]) | static_cast<unsigned char>(bytes[i + 1]) << 8; };
  const std::size_t size = u16(at - 12), data = at + u16(at - 4) + u16(at - 2);  // compressed size, name and extra lengths
  bytes[data + size / 2] = static_cast<char>(bytes[data + size / 2] ^ 0x10);
  std::ofstream(path, std::ios::binary) << bytes;
  return true;
}
}  // namespace

TEST_CASE("checksums: one flipped bit in a tensor or an embedded file of model.pt is refused, naming it", "[models][saved]") {
  const auto dir = scratch("checksums");
  torch::jit::Module m = build("feature-attention", {{"features", 4}});
  {
    torch::NoGradGuard no_grad;
    m.attr("output").toModule().attr("weight").toTensor().copy_(torch::tensor({{1.2345678f, 2.3456789f, 3.4567891f, 4.5678912f}}));
  }
  const std::vector<float> pattern = {1.2345678f, 2.3456789f, 3.4567891f, 4.5678912f};
  const std::string needle(reinterpret_cast<const char*>(pattern.data()), sizeof(float) * pattern.size());
  const nlohmann::json config = {
      {"model", "feature-attention"}, {"model_config", {{"features", 4}}}, {"data", {{"features", {"a", "b", "c", "d"}}}}};
  const std::string good = (dir / "good.pt").string(), bad = (dir / "bad.pt").string(), edited = (dir / "edited.pt").string();
  models::save_model(good, m, config, {{"notes.txt", "some notes"}});
  CHECK_NOTHROW(models::load_model(good, nn::Runtime::kPortable));
  std::filesystem::copy_file(good, bad);
  REQUIRE(flip_bit_of(bad, needle, 5));
  CHECK_THROWS_WITH(models::load_model(bad, nn::Runtime::kPortable),
                    Catch::Contains(bad) && Catch::Contains("tensor 'output.weight' does not match its checksum"));
  std::filesystem::copy_file(good, edited);
  REQUIRE(flip_bit_of(edited, "some notes", 2));
  CHECK_THROWS_WITH(models::load_model(edited, nn::Runtime::kPortable),
                    Catch::Contains("embedded file 'notes.txt' does not match its checksum"));
  // A flipped bit in config.json is reported as that, not as what the config then says (here: a model
  // that does not exist), whether the checksums are compared on a second thread while the config is
  // read and the native module built, or after.
  const std::string config_flipped = (dir / "config.pt").string();
  std::filesystem::copy_file(good, config_flipped);
  REQUIRE(flip_bit_of(config_flipped, "\"model\": \"feature-attention\"", 10));  // "veature-attention"
  const int threads = at::get_num_threads();
  for (const int n : {1, 2}) {
    at::set_num_threads(n);
    for (const nn::Runtime runtime : {nn::Runtime::kPortable, nn::Runtime::kNative})
      CHECK_THROWS_WITH(models::load_model(config_flipped, runtime),
                        Catch::Contains("embedded file 'config.json' does not match its checksum"));
    CHECK_NOTHROW(models::load_model(good, nn::Runtime::kNative));
  }
  at::set_num_threads(threads);
  // The TorchScript code and pickles, which LibTorch parses before any checksum of attn's could be
  // read: their ZIP CRC-32 is checked first (a flipped bit in the code crashed LibTorch's parser).
  const std::string code = (dir / "code.pt").string();
  std::filesystem::copy_file(good, code);
  REQUIRE(flip_record_bit(code, "archive/code/attn.py"));  // deflated by LibTorch
  CHECK_THROWS_WITH(models::load_model(code, nn::Runtime::kPortable),
                    Catch::StartsWith(code + ": record '") && Catch::Contains(".py' does not match its CRC-32: the file is corrupt"));
  // A file from before checksums: it loads, with a warning that says so.
  const std::string old = (dir / "old.pt").string();
  m.save(old, torch::jit::ExtraFilesMap{{"config.json", config.dump()}});
  g_warnings.clear();
  io::set_warning_handler(collect);
  CHECK_NOTHROW(models::load_model(old, nn::Runtime::kPortable));
  io::set_warning_handler(nullptr);
  REQUIRE(g_warnings.size() == 1);
  CHECK_THAT(g_warnings[0], Catch::Contains("old.pt: carries no checksums"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("fuzz finding: a model.pt whose pickle claims a 2.4 GB string is refused without allocating it", "[models][saved]") {
  // libFuzzer (scripts/fuzz.sh) found this 6 KB file: LibTorch's unpickler zero-filled 2.4 GB for
  // the string before noticing the archive ends (attn summary peaked at 2.5 GB of memory).
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/model_file-huge-string-length.pt";
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kPortable),
                    Catch::Contains(path) && Catch::Contains("corrupt pickle at byte") && Catch::Contains("a length of 2433"));
}

TEST_CASE("fuzz finding: a model.pt whose pickle names a huge memo index is refused without allocating it", "[models][saved]") {
  // libFuzzer found it: LibTorch's unpickler grew its memo table to the index (11 GB).
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/model_file-memo-index.pt";
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kPortable), Catch::Contains(path) && Catch::Contains("a memo index of"));
}

TEST_CASE("fuzz finding: a model.pt whose ZIP directory states a 4 GB record is refused before LibTorch allocates it", "[models][saved]") {
  // libFuzzer found it: LibTorch's reader allocated a record's stated size (4,227,858,431 bytes for a
  // debug pickle of a 6 KB file) before reading it; the stated sizes are now checked first.
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/model_file-record-size-4gb.pt";
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kPortable),
                    Catch::StartsWith(path + ": record '") && Catch::Contains("debug_pkl': corrupt sizes"));
}

TEST_CASE("fuzz finding: a model.pt whose EOCD counts no entries is checked by its ZIP64 record, as LibTorch reads it", "[models][saved]") {
  // libFuzzer found it: its EOCD counts 0 entries, so attn's check read none, while LibTorch's reader
  // takes the ZIP64 record's 13 and allocated a debug pickle's stated 4 GB.
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/model_file-eocd-disagrees.pt";
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kPortable),
                    Catch::StartsWith(path + ": record '") && Catch::Contains("debug_pkl': corrupt sizes"));
}

TEST_CASE("fuzz finding: a model.pt whose code has an untyped class attribute is refused before LibTorch compiles it", "[models][saved]") {
  // libFuzzer found it: LibTorch 1.13's type parser dereferenced the missing type of '__perameters__'
  // (SEGV under ASan). It reached the parser past the CRC-32 check because its EOCD counts no entries
  // (so the check read none) while LibTorch follows the ZIP64 record; now that the check follows it
  // too, the changed bytes are a CRC-32 mismatch. The code check itself, for a file whose CRC-32s
  // were made right: tests/io/code_check_test.cpp.
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/model_file-untyped-class-constant.pt";
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kPortable),
                    Catch::Contains(path) && Catch::Contains("does not match its CRC-32"));
}

TEST_CASE("fuzz finding: a model.pt with flipped bits in its code and pickles is refused before LibTorch parses them", "[models][saved]") {
  // libFuzzer found it: LibTorch's TorchScript type parser crashed (SEGV) on the mutated code.
  const std::string path = std::string(ATTN_FIXTURES) + "/fuzz/model_file-code-bit-flip.pt";
  CHECK_THROWS_WITH(models::load_model(path, nn::Runtime::kPortable),
                    Catch::Contains(path) && Catch::Contains("does not match its CRC-32"));
}
