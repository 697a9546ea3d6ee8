#include "attn/text/string_table.h"

#include <cstring>

namespace attn::text {

StringTable::StringTable() : slots_(1024, Slot{0, 0, kMissing, 0}), offsets_{0} {}

std::uint64_t StringTable::head_of(std::string_view key) {
  std::uint64_t head = 0;
  std::memcpy(&head, key.data(), key.size() < 8 ? key.size() : 8);
  return head;
}

bool StringTable::matches(const Slot& s, std::uint32_t hash, std::uint64_t head, std::string_view key) const {
  if (s.hash != hash || s.len != key.size() || s.head != head) return false;
  if (key.size() <= 8) return true;
  return std::memcmp(arena_.data() + offsets_[s.id] + 8, key.data() + 8, key.size() - 8) == 0;
}

std::uint32_t StringTable::hash_of(std::string_view key) {
  // FNV-1a over 8-byte words with a final avalanche: fast for short words, well spread.
  std::uint64_t h = 1469598103934665603ULL ^ key.size();
  const char* p = key.data();
  std::size_t n = key.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 1099511628211ULL;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  h = (h ^ tail) * 1099511628211ULL;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  return static_cast<std::uint32_t>(h);
}

std::int32_t StringTable::find(std::string_view key) const {
  const std::uint32_t h = hash_of(key);
  const std::uint64_t head = head_of(key);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kMissing) return kMissing;
    if (matches(s, h, head, key)) return s.id;
  }
}

std::int32_t StringTable::intern(std::string_view key) {
  const std::uint32_t h = hash_of(key);
  const std::uint64_t head = head_of(key);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kMissing) break;
    if (matches(s, h, head, key)) return s.id;
  }
  const std::int32_t id = size();
  arena_.append(key);
  offsets_.push_back(arena_.size());
  slots_[i] = Slot{head, h, id, static_cast<std::uint32_t>(key.size())};
  if (static_cast<std::size_t>(size()) * 2 > slots_.size()) grow();
  return id;
}

void StringTable::grow() {
  std::vector<Slot> bigger(slots_.size() * 2, Slot{0, 0, kMissing, 0});
  const std::size_t mask = bigger.size() - 1;
  for (const Slot& s : slots_) {
    if (s.id == kMissing) continue;
    std::size_t i = s.hash & mask;
    while (bigger[i].id != kMissing) i = (i + 1) & mask;
    bigger[i] = s;
  }
  slots_.swap(bigger);
}

}  // namespace attn::text
