#pragma once
/// What the apps that run as data-parallel workers share (attn train, attn evaluate): `--nproc N`
/// runs the command again in N forked workers, and a worker's errors name its rank.
#include <cstdlib>
#include <string>
#include <vector>

#include "app.h"
#include "attn/train/command.h"

namespace attn::apps {

/// "attn CMD", or in a worker after the first (RANK set, not 0) "[rank N] attn CMD": what its
/// errors start with.
inline std::string worker_command_name(const std::string& command) {
  const char* rank = std::getenv("RANK");
  return rank && std::string(rank) != "0" ? "[rank " + std::string(rank) + "] " + command : command;
}

/// `--nproc N`: N local workers (train::run_local_workers), each running `run` on this program's
/// arguments without --nproc, its errors reported as worker_command_name(command)'s. Returns the
/// launcher's exit status.
template <class Run>
int run_as_local_workers(int n, const std::string& command, int argc, char** argv, Run run) {
  std::vector<std::string> args = train::worker_arguments(argc, argv);
  return train::run_local_workers(n, [&] {
    std::vector<char*> worker_argv{argv[0]};
    for (std::string& a : args) worker_argv.push_back(a.data());
    worker_argv.push_back(nullptr);
    return guarded(worker_command_name(command), [&] { return run(static_cast<int>(worker_argv.size()) - 1, worker_argv.data()); });
  });
}

}  // namespace attn::apps
