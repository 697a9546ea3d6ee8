#pragma once
// What the tests of data-parallel workers share: a free port, and n connected workers (threads of
// this process, each with its own c10d TCPStore client and Gloo group).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/parallel/workers.h"

namespace attn::testing {

inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// Runs body(rank, workers) as `n` connected workers, one thread each; returns each one's error ("" if none).
/// `place` adjusts where each worker stands (by default: rank 0 hosts the store on a free port).
inline std::vector<std::string> connected_workers(int n, std::chrono::seconds timeout,
                                                  const std::function<void(int, parallel::Workers&)>& body,
                                                  const std::function<void(parallel::WorkerPlace&)>& place_as = nullptr) {
  const int port = free_port();
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        parallel::WorkerPlace place;
        place.rank = rank, place.world_size = n, place.local_world_size = n, place.master_port = port;
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
