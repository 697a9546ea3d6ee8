#pragma once
/// Keras' `text_to_word_sequence` (and the char_level variant): lower with Python's str.lower(),
/// replace every `filters` character by `split`, split on `split` only, drop empty strings.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/text/deobfuscate.h"

namespace attn::text {

/// Keras' default `filters`: ASCII punctuation except the apostrophe, plus TAB and LF.
inline constexpr std::string_view kDefaultFilters = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n";

struct SplitOptions {
  /// Characters replaced by `split` before splitting (code points, not bytes).
  std::string filters = std::string(kDefaultFilters);
  /// Lowercase with Python's `str.lower()` before anything else.
  bool lower = true;
  /// The only separator (Python `str.split(split)`); must not be empty.
  std::string split = " ";
  /// Tokens are the code points of the (lowercased) text, unfiltered and unsplit.
  bool char_level = false;
  /// The text read through text/deobfuscate.h first (no Keras setting: attn train --deobfuscate).
  bool deobfuscate = false;
};

class WordSplitter {
 public:
  /// Buffers reused from text to text (one per thread).
  struct Scratch {
    std::string deobfuscated, lowered, filtered;
  };

  /// Throws std::invalid_argument for an empty split or filters/split that are not UTF-8.
  explicit WordSplitter(SplitOptions options);
  const SplitOptions& options() const { return options_; }

  /// Appends the tokens of `text` (valid UTF-8) to `out`, as views into `text` or `scratch`: valid
  /// until the next call with the same scratch. `known`: deobfuscate's vocabulary (when deobfuscating).
  void split(std::string_view text, Scratch& scratch, std::vector<std::string_view>& out, const KnownWords* known = nullptr) const;
  /// The tokens of `text`, as strings.
  std::vector<std::string> split(std::string_view text) const;

 private:
  bool is_filter(std::uint32_t code_point) const;

  SplitOptions options_;
  // When `split` is one ASCII byte and every filter is ASCII, filters and the separator are all
  // single-byte delimiters: exact, since ASCII bytes never occur inside multi-byte UTF-8.
  // Otherwise the general path replaces code points and splits on the string.
  bool byte_delimiters_ = false;
  bool is_delimiter_[256] = {};
  std::vector<std::uint32_t> filter_code_points_;  // sorted
};

}  // namespace attn::text
