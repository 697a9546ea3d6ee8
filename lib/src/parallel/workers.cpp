// The workers and their rendezvous (see workers.h).
#include "attn/parallel/workers.h"

// Debian's LibTorch CMake config does not define it, and ProcessGroupGloo.hpp is empty without it
// (this file is compiled on its own, never in a unity batch, so the definition comes first).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace attn::parallel {

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
    throw std::invalid_argument("environment variable " + std::string(name) + "=" + text +
                                ": not a whole number >= " + std::to_string(lowest));
  return static_cast<int>(value);
}

bool loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1"; }

/// The addresses `host` resolves to here, as text ("" for a name that does not resolve).
std::vector<std::string> addresses_of(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> out;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return out;
  for (addrinfo* a = found; a; a = a->ai_next) {
    char text[NI_MAXHOST];
    if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0) out.emplace_back(text);
  }
  ::freeaddrinfo(found);
  return out;
}

/// Workers on several machines meet at MASTER_ADDR, and Gloo connects to each worker at the
/// address of its host's name (unless GLOO_SOCKET_IFNAME names an interface): a name that resolves
/// only to loopback addresses here cannot be reached from another machine. Throws saying which.
void check_reachable(const WorkerPlace& place) {
  if (place.local_world_size <= 0 || place.local_world_size >= place.world_size) return;  // one machine: loopback is right
  const auto only_loopback = [](const std::vector<std::string>& addresses) {
    return !addresses.empty() && std::all_of(addresses.begin(), addresses.end(), [](const std::string& a) { return loopback(a); });
  };
  const auto spans = "the " + std::to_string(place.world_size) +
                     " workers span several machines (LOCAL_WORLD_SIZE=" + std::to_string(place.local_world_size) + ")";
  if (only_loopback(addresses_of(place.master_addr)))
    throw std::runtime_error("MASTER_ADDR=" + place.master_addr + " resolves to " + addresses_of(place.master_addr).front() +
                             " (loopback) here, but " + spans +
                             ": give torchrun an address the other machines reach, or map this name to one in /etc/hosts");
  if (!place.interface.empty()) return;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return;
  if (only_loopback(addresses_of(name)))
    throw std::runtime_error("this host's name " + std::string(name) + " resolves to " + addresses_of(name).front() + " (loopback), but " +
                             spans +
                             " and the others could not reach this one: map the name to the machine's network address "
                             "in /etc/hosts, or set GLOO_SOCKET_IFNAME to the interface to use");
}

}  // namespace

WorkerPlace worker_place_from_environment() {
  WorkerPlace p;
  p.world_size = environment_int("WORLD_SIZE", 1, 1);
  p.rank = environment_int("RANK", 0, 0);
  if (p.rank >= p.world_size)
    throw std::invalid_argument("environment variable RANK=" + std::to_string(p.rank) +
                                ": not below WORLD_SIZE=" + std::to_string(p.world_size));
  p.local_rank = environment_int("LOCAL_RANK", p.rank, 0);
  p.restart_count = environment_int("TORCHELASTIC_RESTART_COUNT", 0, 0);
  p.master_addr = environment("MASTER_ADDR", p.master_addr);
  p.master_port = environment_int("MASTER_PORT", p.master_port, 1);
  if (p.master_port > 65535)
    throw std::invalid_argument("environment variable MASTER_PORT=" + std::to_string(p.master_port) + ": not a port");
  p.interface = environment("GLOO_SOCKET_IFNAME");
  p.local_world_size = environment_int("LOCAL_WORLD_SIZE", p.world_size, 1);
  p.agent_store = environment("TORCHELASTIC_USE_AGENT_STORE") == "True";
  return p;
}

std::string rank_prefix(const WorkerPlace& place) { return place.rank == 0 ? "" : "[rank " + std::to_string(place.rank) + "] "; }

// ---- Workers ----------------------------------------------------------------------------------

struct Workers::Impl {
  WorkerPlace place;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;

  std::uint32_t exchanges = 0;  ///< gather() calls so far, alike on every worker: their messages' tag

  /// Runs one collective to completion; c10d's errors name this worker.
  template <class Start>
  void run(const char* what, Start start) {
    run_all(what, [&] { return std::vector<c10::intrusive_ptr<c10d::Work>>{start()}; });
  }

  /// Runs the operations `start` starts (all at once) to completion; c10d's errors name this worker.
  template <class Start>
  void run_all(const char* what, Start start) {
    try {
      for (auto& work : start()) work->wait();
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
    check_reachable(place);
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(place.master_port);
    o.isServer = place.rank == 0 && !place.agent_store;
    o.numWorkers = static_cast<std::size_t>(place.world_size);
    o.waitWorkers = !place.agent_store;
    o.timeout = timeout;
    c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(place.master_addr, o);
    if (place.agent_store) store = c10::make_intrusive<c10d::PrefixStore>("/worker/attempt_" + std::to_string(place.restart_count), store);
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // GLOO_SOCKET_IFNAME is not read for C++ callers: an interface is used only when passed. On one
    // machine the loopback address; across machines the host name's address.
    options->devices.push_back(!place.interface.empty()      ? c10d::ProcessGroupGloo::createDeviceForInterface(place.interface)
                               : loopback(place.master_addr) ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                                             : c10d::ProcessGroupGloo::createDefaultDevice());
    impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, place.rank, place.world_size, options);
    impl->store = store;
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

void Workers::max(torch::Tensor& t) {
  std::vector<torch::Tensor> tensors{t};
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::MAX;
  impl_->run("combining across workers", [&] { return impl_->group->allreduce(tensors, o); });
}

std::vector<torch::Tensor> Workers::gather(const torch::Tensor& t) {
  // Every worker sends its buffer straight to each other one, all at once: between two machines
  // over 1 Gbit/s, swapping 1.2 MB so took 8.7 ms where Gloo's allgather took 12.1 ms (and its
  // allreduce of as many bytes 9.8 ms).
  const int n = size(), me = rank();
  std::vector<torch::Tensor> all(static_cast<std::size_t>(n));
  all[static_cast<std::size_t>(me)] = t;
  const auto tag = static_cast<int>(impl_->exchanges++ % (1U << 30));
  std::vector<std::vector<torch::Tensor>> buffers;  // send and recv take them by reference
  buffers.reserve(2 * static_cast<std::size_t>(n));
  impl_->run_all("gathering from the workers", [&] {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (int k = 1; k < n; ++k) {
      const int to = (me + k) % n, from = (me + n - k) % n;
      all[static_cast<std::size_t>(from)] = torch::empty_like(t);
      buffers.push_back({all[static_cast<std::size_t>(from)]});
      works.push_back(impl_->group->recv(buffers.back(), from, tag));
      buffers.push_back({t});
      works.push_back(impl_->group->send(buffers.back(), to, tag));
    }
    return works;
  });
  return all;
}

std::int64_t Workers::take_number(const std::string& counter) {
  try {
    return impl_->store->add("attn/" + counter, 1) - 1;
  } catch (const std::exception& e) {
    std::string message = e.what();
    if (const auto* c = dynamic_cast<const c10::Error*>(&e)) message = c->what_without_backtrace();
    throw std::runtime_error("worker " + std::to_string(impl_->place.rank) + " of " + std::to_string(impl_->place.world_size) +
                             ": counting on the workers' store failed (it stopped or cannot be reached): " + message.substr(0, 300));
  }
}

void Workers::broadcast(torch::Tensor& t) {
  std::vector<torch::Tensor> tensors{t};
  impl_->run("broadcasting from rank 0", [&] { return impl_->group->broadcast(tensors); });
}

// ---- The store a launcher serves ----------------------------------------------------------------

struct StoreServer::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
};

StoreServer::StoreServer(int workers) : impl_(std::make_unique<Impl>()) {
  try {
    c10d::TCPStoreOptions o;
    o.port = 0;  // the kernel picks a free one
    o.isServer = true;
    o.waitWorkers = false;
    o.numWorkers = static_cast<std::size_t>(workers);
    impl_->store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot serve the workers' store on 127.0.0.1: ") + e.what());
  }
}

StoreServer::~StoreServer() = default;

int StoreServer::port() const { return impl_->store->getPort(); }

}  // namespace attn::parallel
