#pragma once
/// An interning hash table: each distinct string gets the next id (0, 1, 2, ... in first-insert order).
/// Keys live in one contiguous arena, so a vocabulary of 200k words costs a few allocations, and
/// lookups are open-addressing probes over 16-byte slots. This is the tokenizer's hot path.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

class StringTable {
 public:
  static constexpr std::int32_t kMissing = -1;

  StringTable();

  /// A key's hash and inline bytes, computed once (see prefetch()).
  struct Probe {
    std::uint64_t head;
    std::uint32_t hash;
    std::uint32_t tag;
  };
  static Probe probe_of(std::string_view key);
  /// Starts loading the slot `probe` lands on. Batched lookups (probe and prefetch every token of
  /// a text, then intern them) overlap the cache misses instead of paying them one by one.
  void prefetch(const Probe& probe) const { __builtin_prefetch(&slots_[probe.hash & mask_]); }

  /// Id of `key`, inserting it with the next id when absent.
  std::int32_t intern(std::string_view key) { return intern(key, probe_of(key)); }
  /// The same, with `probe` = probe_of(key).
  std::int32_t intern(std::string_view key, const Probe& probe);
  /// Interns key_of(0), ..., key_of(n - 1) in turn, calling done(i, id) for each, with the slots of the
  /// keys kAhead further on prefetched: a table larger than the caches otherwise pays one miss per key.
  template <class KeyOf, class Done>
  void intern_each(std::size_t n, KeyOf&& key_of, Done&& done) {
    constexpr std::size_t kAhead = 16;
    Probe probes[kAhead];
    for (std::size_t i = 0; i < n && i < kAhead; ++i) prefetch(probes[i] = probe_of(key_of(i)));
    for (std::size_t i = 0; i < n; ++i) {
      const Probe probe = probes[i % kAhead];
      if (i + kAhead < n) prefetch(probes[i % kAhead] = probe_of(key_of(i + kAhead)));
      done(i, intern(key_of(i), probe));
    }
  }
  /// Id of `key`, or kMissing.
  std::int32_t find(std::string_view key) const { return find(key, probe_of(key)); }
  /// The same, with `probe` = probe_of(key).
  std::int32_t find(std::string_view key, const Probe& probe) const;
  /// The key with id `id` (valid until the next intern()).
  std::string_view key(std::int32_t id) const { return std::string_view(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]); }
  std::int32_t size() const { return static_cast<std::int32_t>(offsets_.size() - 1); }
  /// Makes room for `n` more keys, of `key_bytes` bytes together, without rehashing or moving keys.
  void reserve(std::size_t n, std::size_t key_bytes = 0);

 private:
  // A slot holds the key's first 8 bytes and a tag (hash bits + length), so keys of up to 8 bytes
  // (most words) are matched without touching the arena.
  struct Slot {
    std::uint64_t head;  // first min(len, 8) bytes of the key, zero-padded
    std::uint32_t tag;   // high 24 bits of the hash | min(len, 255)
    std::int32_t id;     // kMissing when empty
  };
  bool matches(const Slot& s, const Probe& p, std::string_view key) const;
  void grow();

  std::vector<Slot> slots_;
  std::size_t mask_;
  std::string arena_;
  std::vector<std::uint64_t> offsets_;  // key i spans [offsets_[i], offsets_[i+1])
};

}  // namespace attn::text
