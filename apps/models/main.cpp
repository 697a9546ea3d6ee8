// attn models: the model registry, with each model's configuration keys.
#include <cstdio>

#include "../common/app.h"
#include "attn/models/registry.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  cxxopts::Options options("attn models", "List the models attn can train, with their configuration keys.");
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  for (const models::ModelEntry& m : models::models()) {
    std::printf("%s  (task: %s)\n  %s\n  config keys (attn train --set KEY=VALUE):\n", m.name.c_str(),
                models::task_name(m.task), m.description.c_str());
    for (const models::ConfigKey& k : m.keys)
      std::printf("    %-18s %-8s %s\n", k.name.c_str(), k.default_value.dump().c_str(), k.doc.c_str());
  }
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn models", [&] { return attn::apps::run(argc, argv); });
}
