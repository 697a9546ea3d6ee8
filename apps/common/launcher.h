#pragma once
/// `--nproc N` for the commands that run as data-parallel workers (attn train, attn evaluate): N
/// forked copies of this process placed as torchrun places its workers, the signals they need
/// forwarded, and their exit statuses. The process's own business (fork, signals, its environment),
/// hence the apps', not the library's.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "app.h"

namespace attn::apps {

/// This program's arguments (after argv[0]) without `--nproc N`: what each local worker is given.
std::vector<std::string> worker_arguments(int argc, char** argv);

/// N local workers, each a copy of this process made with fork() (so call it before this process
/// starts any thread). In each worker, with its place in the environment as torchrun gives it
/// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT, and
/// TORCHELASTIC_USE_AGENT_STORE: this process serves the workers' store), returns `worker()`'s exit
/// status. In this process: forwards SIGTERM to the workers (SIGINT reaches them from the terminal),
/// and when one fails stops the others (SIGTERM, then SIGKILL after `grace`); returns 0 when all
/// succeeded, else the first failed worker's status (128 + signal when one was killed).
int run_local_workers(int n, const std::function<int()>& worker, std::chrono::seconds grace = std::chrono::seconds(30));

/// "attn CMD", or in a worker after the first (RANK set, not 0) "[rank N] attn CMD": what its
/// errors start with.
inline std::string worker_command_name(const std::string& command) {
  const char* rank = std::getenv("RANK");
  return rank && std::string(rank) != "0" ? "[rank " + std::string(rank) + "] " + command : command;
}

/// `--nproc N`: N local workers (run_local_workers), each running `run` on this program's arguments
/// without --nproc, its errors reported as worker_command_name(command)'s. Returns the launcher's
/// exit status.
template <class Run>
int run_as_local_workers(int n, const std::string& command, int argc, char** argv, Run run) {
  std::vector<std::string> args = worker_arguments(argc, argv);
  return run_local_workers(n, [&] {
    std::vector<char*> worker_argv{argv[0]};
    for (std::string& a : args) worker_argv.push_back(a.data());
    worker_argv.push_back(nullptr);
    return guarded(worker_command_name(command), [&] { return run(static_cast<int>(worker_argv.size()) - 1, worker_argv.data()); });
  });
}

}  // namespace attn::apps
