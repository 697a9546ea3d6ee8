// Data-parallel workers (parallel/workers.h): torchrun's environment read, a malformed variable
// named, the store torchrun's agent serves joined under its prefix, and workers spanning machines
// refused at a loopback address instead of waiting.
#include <cstdlib>

#include <torch/script.h>
#include <catch2/catch.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "attn/parallel/workers.h"
#include "parallel_test_util.h"

using namespace attn;
using attn::testing::connected_workers;
using attn::testing::two_workers;

TEST_CASE("torchrun's environment: the worker's place, and a malformed variable named", "[parallel][workers]") {
  for (const char* k :
       {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "GLOO_SOCKET_IFNAME"})
    ::unsetenv(k);
  auto p = parallel::worker_place_from_environment();
  CHECK(p.world_size == 1);
  CHECK(p.rank == 0);
  CHECK(parallel::rank_prefix(p).empty());
  ::setenv("RANK", "1", 1), ::setenv("WORLD_SIZE", "2", 1), ::setenv("MASTER_ADDR", "10.0.0.5", 1), ::setenv("MASTER_PORT", "29511", 1);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "2", 1);
  p = parallel::worker_place_from_environment();
  CHECK(p.rank == 1);
  CHECK(p.world_size == 2);
  CHECK(p.local_rank == 1);
  CHECK(p.master_addr == "10.0.0.5");
  CHECK(p.master_port == 29511);
  CHECK(p.restart_count == 2);
  CHECK(parallel::rank_prefix(p) == "[rank 1] ");
  ::setenv("RANK", "2", 1);
  CHECK_THROWS_WITH(parallel::worker_place_from_environment(), Catch::Contains("RANK=2") && Catch::Contains("WORLD_SIZE=2"));
  ::setenv("RANK", "one", 1);
  CHECK_THROWS_WITH(parallel::worker_place_from_environment(), Catch::Contains("RANK=one"));
  ::setenv("RANK", "0", 1), ::setenv("MASTER_PORT", "99999", 1);
  CHECK_THROWS_WITH(parallel::worker_place_from_environment(), Catch::Contains("MASTER_PORT=99999"));
  ::setenv("RANK", "1", 1), ::setenv("MASTER_PORT", "29511", 1);
  CHECK(parallel::worker_place_from_environment().local_world_size == 2);  // unset: every worker on this machine
  CHECK_FALSE(parallel::worker_place_from_environment().agent_store);
  ::setenv("LOCAL_WORLD_SIZE", "1", 1), ::setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  p = parallel::worker_place_from_environment();
  CHECK(p.local_world_size == 1);
  CHECK(p.agent_store);
  for (const char* k : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT", "LOCAL_WORLD_SIZE",
                        "TORCHELASTIC_USE_AGENT_STORE"})
    ::unsetenv(k);
}

TEST_CASE("torchrun's static form: the workers join the store its agent serves, under the attempt's prefix", "[parallel][workers]") {
  // What torchrun's agent does on --node_rank 0: serve a TCPStore at MASTER_ADDR:MASTER_PORT itself.
  c10d::TCPStoreOptions o;
  o.port = 0;  // the kernel picks a free one as the store binds it
  o.isServer = true;
  o.waitWorkers = false;
  o.timeout = std::chrono::seconds(30);
  const auto agent = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", o);
  const int port = agent->getPort();
  std::vector<double> sums(2);
  const auto errors = two_workers(
      std::chrono::seconds(30),
      [&](int rank, parallel::Workers& w) {
        torch::Tensor t = torch::full({3}, static_cast<double>(rank + 1), torch::kFloat64);
        w.sum(t);
        sums[static_cast<std::size_t>(rank)] = t[0].item<double>();
      },
      [&](parallel::WorkerPlace& place) {
        place.master_port = port;  // the agent's, where no worker may start a server (the port is taken)
        place.agent_store = true;
        place.restart_count = 1;
      });
  INFO(errors[0] + " / " + errors[1]);
  CHECK(errors[0].empty());
  CHECK(errors[1].empty());
  CHECK(sums == std::vector<double>{3.0, 3.0});
  CHECK(agent->getNumKeys() > 0);  // the group met in the agent's store
}

TEST_CASE("workers on several machines cannot meet at a loopback address: each says so at once instead of waiting", "[parallel][workers]") {
  parallel::WorkerPlace place;
  place.rank = 1, place.world_size = 2, place.local_world_size = 1, place.master_port = 29500;  // never dialled: refused first
  place.master_addr = "localhost";  // what a host name mapped to 127.0.1.1 in /etc/hosts resolves to
  CHECK_THROWS_WITH(parallel::Workers::connect(place, std::chrono::seconds(600)),
                    Catch::Contains("worker 1 of 2") && Catch::Contains("MASTER_ADDR=localhost resolves to") &&
                        Catch::Contains("(loopback)") && Catch::Contains("several machines"));
  place.master_addr = "127.0.0.1";
  CHECK_THROWS_WITH(parallel::Workers::connect(place, std::chrono::seconds(600)), Catch::Contains("MASTER_ADDR=127.0.0.1 resolves to"));
}
