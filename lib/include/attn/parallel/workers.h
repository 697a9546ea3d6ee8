#pragma once
/// Data-parallel workers on PyTorch's own distributed stack: workers started by torchrun (or by
/// `attn train --nproc N` / `attn evaluate --nproc N`, which set the same environment), a rendezvous
/// through c10d's TCPStore and collectives through c10d's ProcessGroupGloo. What they do together
/// is the callers': the gradient exchange (gradient_exchange.h) and shared scoring (sharing.h).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

namespace attn::parallel {

/// This process's place among the workers, from torchrun's environment.
struct WorkerPlace {
  int rank = 0, world_size = 1, local_rank = 0;
  int restart_count = 0;  ///< TORCHELASTIC_RESTART_COUNT: how often torchrun restarted the group
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  /// GLOO_SOCKET_IFNAME: the network interface Gloo connects through ("": the host name's address).
  std::string interface;
  /// LOCAL_WORLD_SIZE: the workers on this machine (WORLD_SIZE when unset; 0: not known, taken as
  /// all); fewer than WORLD_SIZE means the workers span machines, and then no address they meet at
  /// may be a loopback one.
  int local_world_size = 0;
  /// TORCHELASTIC_USE_AGENT_STORE=True (torchrun's static form: --master_addr, --node_rank): torchrun's
  /// agent already serves the store at MASTER_ADDR:MASTER_PORT, so every worker joins it as a client,
  /// under the key prefix "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>" (as torch.distributed does).
  bool agent_store = false;
};

/// Reads RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
/// TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_USE_AGENT_STORE and GLOO_SOCKET_IFNAME; one worker
/// (rank 0 of 1) when WORLD_SIZE is unset. A malformed value throws
/// std::invalid_argument naming the variable.
WorkerPlace worker_place_from_environment();

/// "[rank N] " for the workers after the first, "" for rank 0 and single-process runs: what their
/// output lines start with.
std::string rank_prefix(const WorkerPlace& place);

/// The workers of one training run, connected.
class Workers {
 public:
  /// Rendezvous (rank 0 hosts the TCPStore at MASTER_ADDR:MASTER_PORT, or torchrun's agent does:
  /// agent_store) and the Gloo group. Workers that span machines while MASTER_ADDR or this host's
  /// name resolves to a loopback address (a name /etc/hosts maps to 127.0.1.1) cannot meet: that
  /// throws at once, saying so, instead of waiting. A collective that does not complete within
  /// `timeout` (a worker stopped or unreachable) throws; a worker that died makes the others' next
  /// collective throw at once.
  static std::unique_ptr<Workers> connect(const WorkerPlace& place, std::chrono::seconds timeout);
  ~Workers();
  int rank() const;
  int size() const;
  const WorkerPlace& place() const;
  /// Sums `t` (contiguous, CPU) over the workers, in place. Errors are std::runtime_error naming
  /// this worker.
  void sum(torch::Tensor& t);
  /// The elementwise maximum of `t` over the workers, in place (of 0/1 flags: whether any worker set each).
  void max(torch::Tensor& t);
  /// Every worker's `t` (contiguous, CPU, the same size on every worker), in rank order: each
  /// worker sends its `t` straight to every other one.
  std::vector<torch::Tensor> gather(const torch::Tensor& t);
  /// The next number of the counter named `counter` that all the workers share: 0, 1, 2, ... each
  /// given to one caller (c10d's store).
  std::int64_t take_number(const std::string& counter);
  /// Rank 0's `t` on every worker, in place.
  void broadcast(torch::Tensor& t);

 private:
  struct Impl;
  explicit Workers(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The workers' store, served by the process that started them (`--nproc N`, as torchrun's agent
/// serves it): a c10d TCPStore on a free port of 127.0.0.1 for `workers` workers, which join it as
/// clients (WorkerPlace::agent_store). It serves until destroyed. Throws std::runtime_error.
class StoreServer {
 public:
  explicit StoreServer(int workers);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::parallel
