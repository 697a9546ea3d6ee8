// The model-file loader on arbitrary bytes (seeded with real model.pt files): a model, or a clean
// error naming the file (not TorchScript, no config.json, a checksum mismatch, a missing method).
#include "attn/io/checksum.h"
#include "attn/models/saved_model.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  attn::io::set_warning_handler([](const std::string&) {});
  try {
    attn::models::load_model(fuzz::as_file(data, size, ".model.pt"), attn::nn::Runtime::kNative);
  } catch (const std::exception&) {
  }
  return 0;
}
