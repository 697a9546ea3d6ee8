// attn summary: a Keras-like layer table of a registered model or a trained run.
#include <cstdio>
#include <filesystem>

#include "../common/app.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/train/run.h"

namespace attn::apps {
namespace {

std::string with_commas(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

int run(int argc, char** argv) {
  cxxopts::Options options("attn summary", "Print a model's layers, output shapes and parameter counts.\n\n"
                                           "  attn summary --model bilstm-attention\n  attn summary --model runs/toxic");
  options.add_options("Input")
      ("model", "A registered model name, or a run directory / model.pt", cxxopts::value<std::string>())
      ("set", "Config override KEY=VALUE (repeatable; with a model name)", cxxopts::value<std::vector<std::string>>());
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  const auto what = required<std::string>(r, "model");
  nlohmann::json config;
  if (std::filesystem::exists(what)) {
    config = models::load_model(what).config;
  } else {
    nlohmann::json overrides = nlohmann::json::object();
    if (r.count("set"))
      for (const auto& a : r["set"].as<std::vector<std::string>>()) overrides.update(models::parse_assignment(a));
    try {
      const models::ModelEntry& entry = models::find_model(what);
      config = {{"model", entry.name}, {"model_config", models::resolve_config(entry, overrides)}};
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const models::ModelEntry& entry = models::find_model(config.at("model"));
  const nlohmann::json model_config = models::resolve_config(entry, config.at("model_config"));
  const torch::jit::Module model = entry.build(model_config);
  const auto rows = entry.layers(model, model_config);
  std::printf("Model: %s\n", entry.name.c_str());
  std::printf("%-20s %-34s %-18s %12s\n", "Layer", "Type", "Output shape", "Param #");
  std::printf("%s\n", std::string(87, '=').c_str());
  std::int64_t total = 0;
  for (const auto& row : rows) {
    std::printf("%-20s %-34s %-18s %12s\n", row.name.c_str(), row.type.c_str(), row.output_shape.c_str(),
                with_commas(row.params).c_str());
    total += row.params;
  }
  std::printf("%s\nTotal params: %s\nTrainable params: %s\n", std::string(87, '=').c_str(), with_commas(total).c_str(),
              with_commas(total).c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn summary", [&] { return attn::apps::run(argc, argv); });
}
