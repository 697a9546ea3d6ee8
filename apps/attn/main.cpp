// attn: the front command. `attn CMD ARGS...` runs the app `attn-CMD` that sits beside this binary
// (as git does with git-CMD), so each app links only what it needs. The commands come from
// apps/commands.txt (compiled in as attn/commands.inc).
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
#include "attn/commands.inc"
};

void print_usage(std::ostream& os) {
  os << "attn " << ATTN_VERSION << ": attention models for NLP, trainable and inspectable from the command line\n\n"
     << "usage: attn COMMAND [options]      attn COMMAND --help      attn --version\n\ncommands:\n";
  for (const CommandInfo& c : kCommands) os << "  " << std::string(c.name).append(14 - std::strlen(c.name), ' ') << c.summary << "\n";
}

/// Directory of the running executable.
std::string own_directory() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return ".";
  const std::string path(buf.data(), static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attn::apps;
  const std::string cmd = argc < 2 ? "" : argv[1];
  if (cmd.empty() || cmd == "-h" || cmd == "--help" || cmd == "help") {
    print_usage(cmd.empty() ? std::cerr : std::cout);
    return cmd.empty() ? kExitUsage : kExitOk;
  }
  if (cmd == "--version" || cmd == "-V") {
    std::cout << "attn " << ATTN_VERSION << "\n";
    return kExitOk;
  }
  for (const CommandInfo& c : kCommands) {
    if (cmd != c.name) continue;
    const std::string app = own_directory() + "/attn-" + c.name;
    std::vector<char*> args{const_cast<char*>(app.c_str())};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    ::execv(app.c_str(), args.data());
    std::cerr << "attn: error: cannot run " << app << ": " << std::strerror(errno) << " (every attn-COMMAND binary must sit beside attn)\n";
    return kExitFailure;
  }
  std::cerr << "attn: error: unknown command '" << cmd << "'; commands are:";
  for (const CommandInfo& c : kCommands) std::cerr << " " << c.name;
  std::cerr << " (see 'attn --help')\n";
  return kExitUsage;
}
