#pragma once
// What the tests of data-parallel workers share: n connected workers (threads of this process, each
// with its own c10d TCPStore client and Gloo group).
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "attn/parallel/workers.h"

namespace attn::testing {

/// Runs body(rank, workers) as `n` connected workers, one thread each; returns each one's error ("" if none).
/// `place_as` adjusts where each worker stands. By default they join a store this process serves on a
/// port the kernel picked as it bound it, as `attn train --nproc N`'s workers do (a port found free and
/// bound later could be taken in between by a test running beside this one).
inline std::vector<std::string> connected_workers(int n, std::chrono::seconds timeout,
                                                  const std::function<void(int, parallel::Workers&)>& body,
                                                  const std::function<void(parallel::WorkerPlace&)>& place_as = nullptr) {
  const parallel::StoreServer store(n);
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        parallel::WorkerPlace place;
        place.rank = rank, place.world_size = n, place.local_world_size = n, place.master_port = store.port();
        place.agent_store = true;
        if (place_as) place_as(place);
        const auto workers = parallel::Workers::connect(place, timeout);
        body(rank, *workers);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(rank)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

inline std::vector<std::string> two_workers(std::chrono::seconds timeout, const std::function<void(int, parallel::Workers&)>& body,
                                            const std::function<void(parallel::WorkerPlace&)>& place_as = nullptr) {
  return connected_workers(2, timeout, body, place_as);
}

}  // namespace attn::testing
