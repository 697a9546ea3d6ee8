// attn models: the model registry, with each model's task, training defaults and configuration keys.
#include <cstdio>

#include "../common/app.h"
#include "attn/analyses/commands.h"
#include "attn/train/options.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  cxxopts::Options options("attn models", "List the models attn can train, with their tasks, training defaults and configuration keys.");
  parse_options(options, argc, argv);
  return print(analyses::describe_models(train::training_flags));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn models", attn::apps::run, argc, argv); }
