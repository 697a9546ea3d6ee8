#include "attn/train/distributed.h"

// Debian's LibTorch CMake config does not define it, and ProcessGroupGloo.hpp is empty without it.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

extern char** environ;

namespace attn::train {

namespace {

std::string environment(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

int environment_int(const char* name, int fallback, int lowest) {
  const std::string text = environment(name);
  if (text.empty()) return fallback;
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < lowest || value > 1 << 30)
    throw std::invalid_argument("environment variable " + std::string(name) + "=" + text + ": not a whole number >= " + std::to_string(lowest));
  return static_cast<int>(value);
}

bool loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

}  // namespace

WorkerPlace worker_place_from_environment() {
  WorkerPlace p;
  p.world_size = environment_int("WORLD_SIZE", 1, 1);
  p.rank = environment_int("RANK", 0, 0);
  if (p.rank >= p.world_size)
    throw std::invalid_argument("environment variable RANK=" + std::to_string(p.rank) + ": not below WORLD_SIZE=" + std::to_string(p.world_size));
  p.local_rank = environment_int("LOCAL_RANK", p.rank, 0);
  p.restart_count = environment_int("TORCHELASTIC_RESTART_COUNT", 0, 0);
  p.master_addr = environment("MASTER_ADDR", p.master_addr);
  p.master_port = environment_int("MASTER_PORT", p.master_port, 1);
  if (p.master_port > 65535) throw std::invalid_argument("environment variable MASTER_PORT=" + std::to_string(p.master_port) + ": not a port");
  p.interface = environment("GLOO_SOCKET_IFNAME");
  return p;
}

std::string rank_prefix(const WorkerPlace& place) { return place.rank == 0 ? "" : "[rank " + std::to_string(place.rank) + "] "; }

// ---- Workers ----------------------------------------------------------------------------------

struct Workers::Impl {
  WorkerPlace place;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;

  /// Runs one collective to completion; c10d's errors name this worker.
  template <class Start>
  void run(const char* what, Start start) {
    try {
      auto work = start();
      work->wait();
    } catch (const std::exception& e) {
      std::string message = e.what();
      if (const auto* c = dynamic_cast<const c10::Error*>(&e)) message = c->what_without_backtrace();
      throw std::runtime_error("worker " + std::to_string(place.rank) + " of " + std::to_string(place.world_size) + ": " + what +
                               " failed (another worker stopped or cannot be reached): " + message.substr(0, 300));
    }
  }
};

Workers::Workers(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Workers::~Workers() = default;
int Workers::rank() const { return impl_->place.rank; }
int Workers::size() const { return impl_->place.world_size; }
const WorkerPlace& Workers::place() const { return impl_->place; }

std::unique_ptr<Workers> Workers::connect(const WorkerPlace& place, std::chrono::seconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->place = place;
  const std::string where = place.master_addr + ":" + std::to_string(place.master_port);
  try {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(place.master_port);
    o.isServer = place.rank == 0;
    o.numWorkers = static_cast<std::size_t>(place.world_size);
    o.waitWorkers = true;
    o.timeout = timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(place.master_addr, o);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // GLOO_SOCKET_IFNAME is not read for C++ callers: an interface is used only when passed. On one
    // machine the loopback address; across machines the host name's address.
    options->devices.push_back(!place.interface.empty()      ? c10d::ProcessGroupGloo::createDeviceForInterface(place.interface)
                               : loopback(place.master_addr) ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                                             : c10d::ProcessGroupGloo::createDefaultDevice());
    impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, place.rank, place.world_size, options);
  } catch (const std::exception& e) {
    std::string message = e.what();
    if (const auto* c = dynamic_cast<const c10::Error*>(&e)) message = c->what_without_backtrace();
    throw std::runtime_error("worker " + std::to_string(place.rank) + " of " + std::to_string(place.world_size) +
                             ": cannot join the workers at " + where + " (MASTER_ADDR:MASTER_PORT): " + message.substr(0, 300));
  }
  return std::unique_ptr<Workers>(new Workers(std::move(impl)));
}

void Workers::sum(torch::Tensor& t) {
  std::vector<torch::Tensor> tensors{t};
  impl_->run("summing across workers", [&] { return impl_->group->allreduce(tensors); });
}

void Workers::broadcast(torch::Tensor& t) {
  std::vector<torch::Tensor> tensors{t};
  impl_->run("broadcasting from rank 0", [&] { return impl_->group->broadcast(tensors); });
}

// ---- attn train --nproc N ---------------------------------------------------------------------

namespace {

/// A TCP port nobody listens on now (the kernel's pick), for the workers' store.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot open a socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(errno));
  return ntohs(a.sin_port);
}

volatile sig_atomic_t g_forward = 0;
extern "C" void remember_signal(int sig) { g_forward = sig; }

int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

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

int run_local_workers(int n, const std::vector<std::string>& arguments, const std::string& program, std::chrono::seconds grace) {
  if (n < 1) throw std::invalid_argument("--nproc must be >= 1, got " + std::to_string(n));
  std::string path = program;  // the binary itself, so that ps and /proc name it as the user would
  if (program == "/proc/self/exe") {
    std::error_code ec;
    const auto resolved = std::filesystem::read_symlink(program, ec);
    if (!ec) path = resolved.string();
  }
  const int port = free_port();
  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (key != "RANK" && key != "WORLD_SIZE" && key != "LOCAL_RANK" && key != "LOCAL_WORLD_SIZE" && key != "MASTER_ADDR" &&
        key != "MASTER_PORT" && key != "TORCHELASTIC_RESTART_COUNT")
      base_env.push_back(kv);
  }
  std::vector<char*> args{path.data()};
  for (const auto& a : arguments) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  // Ctrl-C reaches every worker through the terminal's process group; SIGTERM sent to this process
  // is forwarded. Either way the workers stop together at the same batch and rank 0 checkpoints.
  struct sigaction on{}, old_int{}, old_term{};
  on.sa_handler = remember_signal;
  sigemptyset(&on.sa_mask);
  sigaction(SIGINT, &on, &old_int);
  sigaction(SIGTERM, &on, &old_term);
  g_forward = 0;

  std::vector<pid_t> pids;
  int first_failure = 0;
  const auto stop_all = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);
  };
  for (int rank = 0; rank < n; ++rank) {
    std::vector<std::string> env = base_env;
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("LOCAL_RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(n));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(n));
    env.push_back("MASTER_ADDR=127.0.0.1");
    env.push_back("MASTER_PORT=" + std::to_string(port));
    env.push_back("TORCHELASTIC_RESTART_COUNT=0");
    std::vector<char*> envp;
    for (auto& kv : env) envp.push_back(kv.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int err = ::posix_spawn(&pid, path.c_str(), nullptr, nullptr, args.data(), envp.data());
    if (err != 0) {
      stop_all(SIGKILL);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      sigaction(SIGINT, &old_int, nullptr);
      sigaction(SIGTERM, &old_term, nullptr);
      throw std::runtime_error(path + ": cannot start worker " + std::to_string(rank) + ": " + std::strerror(err));
    }
    pids.push_back(pid);
  }

  int running = n;
  auto deadline = std::chrono::steady_clock::time_point::max();
  bool killed = false;
  while (running > 0) {
    if (g_forward == SIGTERM) {  // SIGINT already reached the workers from the terminal
      stop_all(SIGTERM);
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
            stop_all(SIGTERM);  // the others' next collective fails anyway; this wakes one blocked elsewhere
            deadline = std::chrono::steady_clock::now() + grace;
          }
        }
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      stop_all(SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return first_failure;
}

}  // namespace attn::train
