// `--nproc N`: local data-parallel workers (see launcher.h).
#include "launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

#include "attn/parallel/workers.h"

namespace attn::apps {

namespace {

volatile sig_atomic_t g_forward = 0;
extern "C" void remember_signal(int sig) { g_forward = sig; }

int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

/// Sends `sig` to every worker still running (a pid of -1: one that has ended).
void signal_all(const std::vector<pid_t>& pids, int sig) {
  for (pid_t p : pids)
    if (p > 0) ::kill(p, sig);
}

/// The handlers SIGINT and SIGTERM had before remember_stop_signals.
struct SavedHandlers {
  struct sigaction old_int, old_term;
};

/// Points SIGINT and SIGTERM at remember_signal (forgetting any signal remembered before); returns their old handlers.
SavedHandlers remember_stop_signals() {
  struct sigaction on {};
  SavedHandlers saved{};
  on.sa_handler = remember_signal;
  sigemptyset(&on.sa_mask);
  sigaction(SIGINT, &on, &saved.old_int);
  sigaction(SIGTERM, &on, &saved.old_term);
  g_forward = 0;
  return saved;
}

/// Gives SIGINT and SIGTERM back their old handlers.
void restore_stop_signals(const SavedHandlers& saved) {
  sigaction(SIGINT, &saved.old_int, nullptr);
  sigaction(SIGTERM, &saved.old_term, nullptr);
}

/// In a forked worker: waits for the store's port on `from` (end of file: the launcher failed) and
/// sets the variables that place worker `rank` of `n`, as torchrun's agent does when it serves the store.
bool place_forked_worker(int from, int rank, int n) {
  int port = 0;
  std::size_t got = 0;
  while (got < sizeof port) {
    const ssize_t r = ::read(from, reinterpret_cast<char*>(&port) + got, sizeof port - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  ::close(from);
  const std::pair<const char*, std::string> place[] = {{"RANK", std::to_string(rank)},      {"LOCAL_RANK", std::to_string(rank)},
                                                       {"WORLD_SIZE", std::to_string(n)},   {"LOCAL_WORLD_SIZE", std::to_string(n)},
                                                       {"MASTER_ADDR", "127.0.0.1"},        {"MASTER_PORT", std::to_string(port)},
                                                       {"TORCHELASTIC_RESTART_COUNT", "0"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
  for (const auto& [key, value] : place) ::setenv(key, value.c_str(), 1);
  // ps and /proc/PID/comm tell the workers apart (their command lines are the launcher's).
  ::prctl(PR_SET_NAME, ("attn-worker-" + std::to_string(rank)).c_str());
  return true;
}

/// Waits for the `running` workers in `pids` to end (their pids become -1), forwarding a SIGTERM; after the first
/// failure stops the others, and kills them `grace` later. Returns the first failure's exit code (128 + signal), 0 if none.
int wait_for_workers(std::vector<pid_t>& pids, int running, std::chrono::seconds grace) {
  int first_failure = 0;
  auto deadline = std::chrono::steady_clock::time_point::max();
  bool killed = false;
  while (running > 0) {
    if (g_forward == SIGTERM) {  // SIGINT already reached the workers from the terminal
      signal_all(pids, SIGTERM);
      g_forward = 0;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (pid_t& p : pids) {
        if (p != pid) continue;
        p = -1;
        --running;
        const int code = status_code(status);
        if (code != 0 && first_failure == 0) {
          first_failure = code;
          if (running > 0) {
            signal_all(pids, SIGTERM);  // the others' next collective fails anyway; this wakes one blocked elsewhere
            deadline = std::chrono::steady_clock::now() + grace;
          }
        }
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      signal_all(pids, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return first_failure;
}

}  // namespace

std::vector<std::string> worker_arguments(int argc, char** argv) {
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nproc") {
      ++i;  // and its value
    } else if (a.rfind("--nproc=", 0) != 0) {
      command.push_back(a);
    }
  }
  return command;
}

int run_local_workers(int n, const std::function<int()>& worker, std::chrono::seconds grace) {
  if (n < 1) throw std::invalid_argument("--nproc must be >= 1, got " + std::to_string(n));
  // Ctrl-C reaches every worker through the terminal's process group; SIGTERM sent to this process
  // is forwarded. Either way the workers stop together at the same batch and rank 0 checkpoints.
  const SavedHandlers saved = remember_stop_signals();
  // Forked, not started afresh: this process has loaded LibTorch (0.7 s here) and started no
  // thread yet, so the workers begin at once. Each waits on a pipe for the store's port.
  std::vector<pid_t> pids;
  std::vector<int> ports_to;
  const auto fail = [&](const std::string& what) {
    for (int fd : ports_to) ::close(fd);  // a waiting worker reads end of file and ends
    for (pid_t p : pids) ::waitpid(p, nullptr, 0);
    restore_stop_signals(saved);
    throw std::runtime_error(what);
  };
  for (int rank = 0; rank < n; ++rank) {
    int fds[2];
    if (::pipe(fds) != 0) fail(std::string("cannot start the workers: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]), ::close(fds[1]);
      fail("cannot start worker " + std::to_string(rank) + ": " + std::strerror(errno));
    }
    if (pid == 0) {  // the worker: its own stop handlers, its place, then the command
      for (int fd : ports_to) ::close(fd);
      ::close(fds[1]);
      restore_stop_signals(saved);
      if (!place_forked_worker(fds[0], rank, n)) return 1;  // the launcher failed and says why
      return worker();
    }
    ::close(fds[0]);
    pids.push_back(pid);
    ports_to.push_back(fds[1]);
  }
  // The workers' store, served here as torchrun's agent serves it (after the forks: it starts a thread).
  std::unique_ptr<parallel::StoreServer> store;
  try {
    store = std::make_unique<parallel::StoreServer>(n);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  const int port = store->port();
  for (int fd : ports_to) {
    (void)!::write(fd, &port, sizeof port);  // a worker that already ended is seen by wait_for_workers
    ::close(fd);
  }
  const int first_failure = wait_for_workers(pids, n, grace);
  restore_stop_signals(saved);
  return first_failure;
}

}  // namespace attn::apps
