#pragma once
/// The connection layer's book of open connections (http.h: "Connections"): how many each client
/// address holds, what each is doing, and which one makes room when the server is full. No sockets
/// here: a connection is whatever can be aborted or stopped, so the policy is tested on its own.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attn::server {

/// What a connection is doing; each phase has its own deadline (http.cpp).
enum class Phase {
  kHandshake,  ///< TLS handshake (deadline: request_read)
  kIdle,       ///< waiting for a request's first byte (keep_alive)
  kReading,    ///< a request arriving (request_read from its first byte)
  kBusy,       ///< the handler has the request (no deadline of ours)
  kWriting,    ///< a response going out (write_timeout)
  kClosing,    ///< answered; discarding what the client still sends, briefly
};

class Connection {
 public:
  virtual ~Connection() = default;
  /// Closes at once (evicted, or the server stops while it reads or waits).
  virtual void abort() = 0;
  /// The server stops: closes unless a request is being handled or answered.
  virtual void stop_if_quiet() = 0;
};

class ConnectionRegistry {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Admission { kAdmitted, kPerClient, kSaturated };
  struct Admitted {
    Admission admission;
    std::uint64_t id = 0;
    std::shared_ptr<Connection> evicted;  ///< to close for this one
  };

  ConnectionRegistry(std::size_t max_connections, std::size_t per_client) : max_(max_connections), per_client_(per_client) {}

  /// Takes a new connection from `client`. Past `per_client` of that address: kPerClient. Full:
  /// evicts the idle (or closing) connection in its phase longest, else the reading one (or
  /// handshaking) that began first; with every connection busy or writing: kSaturated. A refused
  /// connection gets an id too (it is answered, then removed) but counts toward no limit.
  Admitted admit(const std::string& client, Clock::time_point now);
  /// The connection behind `id` (held weakly: the registry never keeps a connection alive).
  void attach(std::uint64_t id, const std::shared_ptr<Connection>& c);
  void phase(std::uint64_t id, Phase p, Clock::time_point since);
  void remove(std::uint64_t id);
  /// Every connection still alive.
  std::vector<std::shared_ptr<Connection>> all() const;
  /// Connections open, refused ones included until they close.
  std::size_t size() const;
  /// Blocks until every connection is removed.
  void wait_empty();

 private:
  struct Slot {
    std::weak_ptr<Connection> connection;
    std::string client;
    Phase phase;
    Clock::time_point since;
    bool counted;  ///< toward max_connections and per_client (a refused connection is not)
    bool evicted;
  };
  const std::size_t max_, per_client_;
  mutable std::mutex mutex_;
  std::condition_variable empty_;
  std::map<std::uint64_t, Slot> slots_;
  std::map<std::string, std::size_t> clients_;
  std::size_t counted_ = 0;
  std::uint64_t next_ = 1;
};

}  // namespace attn::server
