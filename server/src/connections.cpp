#include "connections.h"

namespace attn::server {

namespace {

/// Which connection makes room first: 0 idle or closing, 1 reading or handshaking, 2 never.
int eviction_rank(Phase p) {
  if (p == Phase::kIdle || p == Phase::kClosing) return 0;
  if (p == Phase::kReading || p == Phase::kHandshake) return 1;
  return 2;
}

}  // namespace

ConnectionRegistry::Admitted ConnectionRegistry::admit(const std::string& client, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t id = next_++;
  const auto mine = clients_.find(client);
  if (mine != clients_.end() && mine->second >= per_client_) {
    slots_[id] = {{}, client, Phase::kClosing, now, false, false};
    return {Admission::kPerClient, id, nullptr};
  }
  std::shared_ptr<Connection> victim;
  if (counted_ >= max_) {
    Slot* chosen = nullptr;
    for (auto& [slot_id, slot] : slots_) {
      const int rank = eviction_rank(slot.phase);
      if (!slot.counted || slot.evicted || rank == 2) continue;
      const int chosen_rank = chosen ? eviction_rank(chosen->phase) : 3;
      if (rank < chosen_rank || (rank == chosen_rank && slot.since < chosen->since)) chosen = &slot;
    }
    if (!chosen) {
      slots_[id] = {{}, client, Phase::kClosing, now, false, false};
      return {Admission::kSaturated, id, nullptr};
    }
    chosen->evicted = true;
    --counted_;
    victim = chosen->connection.lock();
  }
  slots_[id] = {{}, client, Phase::kIdle, now, true, false};
  ++clients_[client];
  ++counted_;
  return {Admission::kAdmitted, id, victim};
}

void ConnectionRegistry::attach(std::uint64_t id, const std::shared_ptr<Connection>& c) {
  std::lock_guard<std::mutex> lock(mutex_);
  slots_.at(id).connection = c;
}

void ConnectionRegistry::phase(std::uint64_t id, Phase p, Clock::time_point since) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& s = slots_.at(id);
  s.phase = p;
  s.since = since;
}

void ConnectionRegistry::remove(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) return;
  if (it->second.counted) {
    if (--clients_[it->second.client] == 0) clients_.erase(it->second.client);
    if (!it->second.evicted) --counted_;
  }
  slots_.erase(it);
  if (slots_.empty()) empty_.notify_all();
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<Connection>> out;
  for (const auto& [id, slot] : slots_)
    if (auto c = slot.connection.lock()) out.push_back(std::move(c));
  return out;
}

std::size_t ConnectionRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size();
}

void ConnectionRegistry::wait_empty() {
  std::unique_lock<std::mutex> lock(mutex_);
  empty_.wait(lock, [this] { return slots_.empty(); });
}

}  // namespace attn::server
