// The interning table (string_table.cpp): ids in first-insert order, keys of every length, growth,
// reserve, and batched interning with prefetches.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/text/string_table.h"

using attn::text::StringTable;

namespace {

/// Keys of lengths 0..40 that differ only in their last byte or only in their length: the slot's
/// inline bytes and tag cannot tell them apart alone.
std::vector<std::string> tricky_keys() {
  std::vector<std::string> keys;
  for (std::size_t n = 0; n <= 40; ++n) {
    keys.push_back(std::string(n, 'a'));
    if (n > 0) keys.push_back(std::string(n - 1, 'a') + "b");
  }
  keys.push_back(std::string("\0a", 2));
  keys.push_back(std::string("a\0", 2));
  return keys;
}

}  // namespace

TEST_CASE("intern gives ids in first-insert order and find gives them back", "[string_table]") {
  StringTable t;
  const std::vector<std::string> keys = tricky_keys();
  for (std::size_t i = 0; i < keys.size(); ++i) CHECK(t.intern(keys[i]) == static_cast<std::int32_t>(i));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    CHECK(t.intern(keys[i]) == static_cast<std::int32_t>(i));
    CHECK(t.find(keys[i]) == static_cast<std::int32_t>(i));
    CHECK(t.key(static_cast<std::int32_t>(i)) == keys[i]);
  }
  CHECK(t.size() == static_cast<std::int32_t>(keys.size()));
  CHECK(t.find("not there") == StringTable::kMissing);
  CHECK(t.find(std::string(41, 'a')) == StringTable::kMissing);
}

TEST_CASE("the table grows and reserves without losing a key", "[string_table]") {
  const auto word = [](int i) { return "w" + std::to_string(i * 7919); };
  for (const bool reserved : {false, true}) {
    StringTable t;
    t.intern("first");
    if (reserved) t.reserve(50000, 50000 * 8);  // room for more keys on top of the one there
    for (int i = 0; i < 50000; ++i) REQUIRE(t.intern(word(i)) == i + 1);
    CHECK(t.find("first") == 0);
    for (int i = 0; i < 50000; i += 997) CHECK(t.find(word(i)) == i + 1);
    CHECK(t.key(50000) == word(49999));
  }
}

TEST_CASE("intern_each interns in order, as intern one by one does", "[string_table]") {
  std::vector<std::string> keys = tricky_keys();
  for (int i = 0; i < 3000; ++i) keys.push_back("k" + std::to_string(i % 1000));  // repeats
  StringTable one_by_one, batched;
  std::vector<std::int32_t> expected, got(keys.size(), -2);
  for (const std::string& k : keys) expected.push_back(one_by_one.intern(k));
  batched.reserve(keys.size());
  batched.intern_each(
      keys.size(), [&](std::size_t i) { return std::string_view(keys[i]); }, [&](std::size_t i, std::int32_t id) { got[i] = id; });
  CHECK(got == expected);
  CHECK(batched.size() == one_by_one.size());
  // Fewer keys than the prefetch distance, and none at all.
  StringTable small;
  std::vector<std::int32_t> ids;
  small.intern_each(
      3, [&](std::size_t i) { return std::string_view(keys[i]); }, [&](std::size_t, std::int32_t id) { ids.push_back(id); });
  CHECK(ids == std::vector<std::int32_t>{0, 1, 2});
  small.intern_each(
      0,
      [&](std::size_t) -> std::string_view {
        FAIL("called");
        return {};
      },
      [&](std::size_t, std::int32_t) { FAIL("called"); });
}
