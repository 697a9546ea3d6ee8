#pragma once
/// Texts stored back to back in one buffer: a block of texts is one allocation, not one per text
/// (what the CSV reader hands the tokenizer's workers, which free it once tokenised).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

class PackedTexts {
 public:
  std::size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  /// Text i (valid while this holds it).
  std::string_view operator[](std::size_t i) const {
    const std::size_t begin = i ? ends_[i - 1] : 0;
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  void push_back(std::string_view text);
  void reserve(std::size_t texts, std::size_t bytes);
  /// The bytes of all the texts.
  std::size_t bytes() const { return bytes_.size(); }

 private:
  std::string bytes_;
  std::vector<std::size_t> ends_;  // text i ends at ends_[i] (and starts where text i - 1 ends)
};

}  // namespace attn::text
