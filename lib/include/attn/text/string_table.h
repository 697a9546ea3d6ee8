#pragma once
/// An interning hash table: each distinct string gets the next id (0, 1, 2, ... in first-insert order).
/// Keys live in one contiguous arena, so a vocabulary of 200k words costs two allocations, and
/// lookups are open-addressing probes over (hash, id) pairs. This is the tokenizer's hot path.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

class StringTable {
 public:
  static constexpr std::int32_t kMissing = -1;

  StringTable();

  /// Id of `key`, inserting it with the next id when absent.
  std::int32_t intern(std::string_view key);
  /// Id of `key`, or kMissing.
  std::int32_t find(std::string_view key) const;
  /// The key with id `id` (valid until the next intern()).
  std::string_view key(std::int32_t id) const {
    return std::string_view(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  std::int32_t size() const { return static_cast<std::int32_t>(offsets_.size() - 1); }

 private:
  // A slot carries the key's length and first 8 bytes, so most words (short ones) are matched
  // without touching the arena: one cache line per lookup on the hot path.
  struct Slot {
    std::uint64_t head;  // first min(len, 8) bytes of the key, zero-padded
    std::uint32_t hash;
    std::int32_t id;  // kMissing when empty
    std::uint32_t len;
  };
  static std::uint32_t hash_of(std::string_view key);
  static std::uint64_t head_of(std::string_view key);
  bool matches(const Slot& s, std::uint32_t hash, std::uint64_t head, std::string_view key) const;
  void grow();

  std::vector<Slot> slots_;
  std::string arena_;
  std::vector<std::uint64_t> offsets_;  // key i spans [offsets_[i], offsets_[i+1])
};

}  // namespace attn::text
