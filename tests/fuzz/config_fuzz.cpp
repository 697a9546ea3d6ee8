// Model configs and --set assignments on arbitrary bytes: resolved against every registered model,
// fitted to data sizes, and config.json read as a run's; clean errors, never a crash.
#include <string>

#include "attn/io/json_like.h"
#include "attn/models/overrides.h"
#include "attn/models/registry.h"
#include "attn/train/options.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    models::parse_assignment(bytes);
  } catch (const std::exception&) {
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes);
  } catch (const std::exception&) {
    return 0;
  }
  for (const models::ModelEntry& entry : models::models()) {
    try {
      models::resolve_config(entry, j);
      models::fit_config(entry, j, models::DataSizes{100, 3, 4, 20, 50, 10});
    } catch (const std::exception&) {
    }
  }
  try {
    io::get_like<train::RunConfig>(j);  // as --resume reads config.json
    train::validate(io::get_like<train::TrainOptions>(j.at("training")));
  } catch (const std::exception&) {
  }
  return 0;
}
