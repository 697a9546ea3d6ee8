// attn: the front command. Each subcommand is an app of its own under apps/; this is their list.
#include <cstring>
#include <iostream>
#include <string>

#include "../common/app.h"
#include "attn/version.h"

namespace attn::apps {
int run_prepare(int argc, char** argv);
int run_tokenize(int argc, char** argv);
}  // namespace attn::apps

namespace {

using attn::apps::Command;

const Command kCommands[] = {
    {"prepare", "CSV -> Keras-exact tokenizer.json + padded ids (data.pt) + prepare.json", attn::apps::run_prepare},
    {"tokenize", "Print the word indices of texts with a fitted tokenizer.json", attn::apps::run_tokenize},
};

void print_usage(std::ostream& os) {
  os << "attn " << ATTN_VERSION << ": attention models for NLP, trainable and inspectable from the command line\n\n"
     << "usage: attn COMMAND [options]      attn COMMAND --help      attn --version\n\ncommands:\n";
  for (const Command& c : kCommands) {
    std::string name = c.name;
    name.resize(12, ' ');
    os << "  " << name << c.summary << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return attn::apps::kExitUsage;
  }
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    print_usage(std::cout);
    return attn::apps::kExitOk;
  }
  if (cmd == "--version" || cmd == "-V") {
    std::cout << "attn " << ATTN_VERSION << "\n";
    return attn::apps::kExitOk;
  }
  for (const Command& c : kCommands) {
    if (cmd == c.name) {
      std::string program = std::string("attn ") + c.name;
      std::vector<char*> args(argv + 1, argv + argc);
      args[0] = program.data();
      return c.run(static_cast<int>(args.size()), args.data());
    }
  }
  std::cerr << "attn: error: unknown command '" << cmd << "'; commands are:";
  for (const Command& c : kCommands) std::cerr << " " << c.name;
  std::cerr << " (see 'attn --help')\n";
  return attn::apps::kExitUsage;
}
