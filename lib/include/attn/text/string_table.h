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
  struct Slot {
    std::uint32_t hash;
    std::int32_t id;  // kMissing when empty
  };
  static std::uint32_t hash_of(std::string_view key);
  void grow();

  std::vector<Slot> slots_;
  std::string arena_;
  std::vector<std::uint64_t> offsets_;  // key i spans [offsets_[i], offsets_[i+1])
};

}  // namespace attn::text
