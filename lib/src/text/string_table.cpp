#include "attn/text/string_table.h"

#include <algorithm>
#include <cstring>

namespace attn::text {
namespace {

std::uint64_t load8(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::uint32_t load4(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// The first min(n, 8) bytes of p, zero-padded, read with whole loads: overlapping reads of the
/// same bytes OR together harmlessly, and no store-to-load forwarding stall as with a memcpy of n bytes.
std::uint64_t head_bytes(const char* p, std::size_t n) {
  if (n >= 8) return load8(p);
  if (n >= 4) return load4(p) | (static_cast<std::uint64_t>(load4(p + n - 4)) << (8 * (n - 4)));
  if (n == 0) return 0;
  const auto b = [p](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])); };
  return b(0) | (b(n >> 1) << (8 * (n >> 1))) | (b(n - 1) << (8 * (n - 1)));
}

std::uint64_t mix(std::uint64_t h) {
  h *= 0x9E3779B97F4A7C15ULL;
  return h ^ (h >> 29);
}

}  // namespace

StringTable::StringTable() : slots_(1024, Slot{0, 0, kMissing}), mask_(1023), offsets_{0} {}

StringTable::Probe StringTable::probe_of(std::string_view key) {
  const char* p = key.data();
  const std::size_t n = key.size();
  const std::uint64_t head = head_bytes(p, n);
  std::uint64_t h = mix(head ^ (n * 0xC2B2AE3D27D4EB4FULL));
  if (n > 8) {
    for (std::size_t i = 8; i + 8 <= n; i += 8) h = mix(h ^ load8(p + i));
    h = mix(h ^ load8(p + n - 8));  // the last 8 bytes (may overlap the loop's)
  }
  h ^= h >> 32;
  const auto hash = static_cast<std::uint32_t>(h);
  return Probe{head, hash, (hash & 0xFFFFFF00u) | static_cast<std::uint32_t>(n < 255 ? n : 255)};
}

bool StringTable::matches(const Slot& s, const Probe& p, std::string_view key) const {
  if (s.tag != p.tag || s.head != p.head) return false;
  if (key.size() <= 8) return true;  // length (in the tag) and all bytes (in head) are equal
  const std::uint64_t begin = offsets_[static_cast<std::size_t>(s.id)];
  const std::uint64_t len = offsets_[static_cast<std::size_t>(s.id) + 1] - begin;
  return len == key.size() && std::memcmp(arena_.data() + begin + 8, key.data() + 8, key.size() - 8) == 0;
}

std::int32_t StringTable::find(std::string_view key, const Probe& p) const {
  for (std::size_t i = p.hash & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.id == kMissing) return kMissing;
    if (matches(s, p, key)) return s.id;
  }
}

std::int32_t StringTable::intern(std::string_view key, const Probe& p) {
  std::size_t i = p.hash & mask_;
  for (;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.id == kMissing) break;
    if (matches(s, p, key)) return s.id;
  }
  const std::int32_t id = size();
  arena_.append(key);
  offsets_.push_back(arena_.size());
  slots_[i] = Slot{p.head, p.tag, id};
  if (static_cast<std::size_t>(size()) * 2 > slots_.size()) grow();
  return id;
}

namespace {

/// Room for `more` elements in `v`, growing it at least twofold (a table filled by many calls of
/// reserve and intern grows as often as push_back alone would have it).
template <class Container>
void reserve_more(Container& v, std::size_t more) {
  if (v.capacity() - v.size() < more) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

}  // namespace

void StringTable::reserve(std::size_t n, std::size_t key_bytes) {
  reserve_more(arena_, key_bytes);
  reserve_more(offsets_, n);
  if (size() == 0) {  // nothing to rehash: the slots at their final size at once
    std::size_t slots = slots_.size();
    while (slots < 2 * n) slots *= 2;
    if (slots != slots_.size()) {
      slots_.assign(slots, Slot{0, 0, kMissing});
      mask_ = slots - 1;
    }
  }
  while (slots_.size() < 2 * (static_cast<std::size_t>(size()) + n)) grow();
}

void StringTable::grow() {
  // Rehash from the keys: slots keep only 24 bits of the hash.
  std::vector<Slot> bigger(slots_.size() * 2, Slot{0, 0, kMissing});
  const std::size_t mask = bigger.size() - 1;
  for (const Slot& s : slots_) {
    if (s.id == kMissing) continue;
    const Probe p = probe_of(key(s.id));
    std::size_t i = p.hash & mask;
    while (bigger[i].id != kMissing) i = (i + 1) & mask;
    bigger[i] = s;
  }
  slots_.swap(bigger);
  mask_ = mask;
}

}  // namespace attn::text
