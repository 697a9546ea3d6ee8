// attn: the front command. `attn CMD ARGS...` runs the app `attn-CMD` that sits beside this binary
// (as git does with git-CMD), so each app links only what it needs. This file holds the list.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "../common/app.h"
#include "attn/version.h"

namespace {

struct CommandInfo {
  const char* name;
  const char* summary;
};

const CommandInfo kCommands[] = {
    {"prepare", "CSV -> Keras-exact tokenizer.json + padded ids (data.pt) + prepare.json"},
    {"tokenize", "Print the word indices of texts with a fitted tokenizer.json"},
    {"train", "Train a registered model on a CSV or prepared data into a run directory"},
    {"explain", "What a model attends to: per word, per feature, or output x input characters"},
    {"evaluate", "Score a CSV: Kaggle submission + ROC AUC; feature attention; exact match"},
    {"export", "Write a run's model as one TorchScript file (config and tokenizer inside)"},
    {"summary", "A model's layers, output shapes and parameter counts"},
    {"models", "The model registry: names, descriptions, config keys"},
    {"datagen", "Generate data sets: toxic (Kaggle Jigsaw format), features, dates"},
};

void print_usage(std::ostream& os) {
  os << "attn " << ATTN_VERSION << ": attention models for NLP, trainable and inspectable from the command line\n\n"
     << "usage: attn COMMAND [options]      attn COMMAND --help      attn --version\n\ncommands:\n";
  for (const CommandInfo& c : kCommands) {
    std::string name = c.name;
    name.resize(12, ' ');
    os << "  " << name << c.summary << "\n";
  }
}

/// Directory of the running executable.
std::string own_directory() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return ".";
  std::string path(buf.data(), static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
  using attn::apps::kExitUsage;
  if (argc < 2) {
    print_usage(std::cerr);
    return kExitUsage;
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
  for (const CommandInfo& c : kCommands) {
    if (cmd != c.name) continue;
    const std::string app = own_directory() + "/attn-" + c.name;
    std::vector<char*> args;
    args.push_back(const_cast<char*>(app.c_str()));
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    ::execv(app.c_str(), args.data());
    std::cerr << "attn: error: cannot run " << app << ": " << std::strerror(errno)
              << " (every attn-COMMAND binary must sit beside attn)\n";
    return attn::apps::kExitFailure;
  }
  std::cerr << "attn: error: unknown command '" << cmd << "'; commands are:";
  for (const CommandInfo& c : kCommands) std::cerr << " " << c.name;
  std::cerr << " (see 'attn --help')\n";
  return kExitUsage;
}
