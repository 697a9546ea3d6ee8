#include "attn/text/word_splitter.h"

#include <algorithm>
#include <stdexcept>

#include "attn/text/deobfuscate.h"
#include "attn/text/unicode.h"

namespace attn::text {
namespace {

/// Decodes the code point starting at s[i] (s is valid UTF-8) and its byte length.
std::uint32_t decode_at(std::string_view s, std::size_t i, std::size_t& len) {
  const auto c = static_cast<unsigned char>(s[i]);
  len = utf8_sequence_length(c);
  if (i + len > s.size()) len = 1;
  if (len == 1) return c;
  std::uint32_t cp = c & (0xFF >> (len + 1));
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

}  // namespace

WordSplitter::WordSplitter(SplitOptions options) : options_(std::move(options)) {
  if (options_.split.empty()) throw std::invalid_argument("split must not be empty");
  if (find_invalid_utf8(options_.filters) != std::string_view::npos) throw std::invalid_argument("filters are not valid UTF-8");
  if (find_invalid_utf8(options_.split) != std::string_view::npos) throw std::invalid_argument("split is not valid UTF-8");
  for (std::size_t i = 0; i < options_.filters.size();) {
    std::size_t len;
    filter_code_points_.push_back(decode_at(options_.filters, i, len));
    i += len;
  }
  std::sort(filter_code_points_.begin(), filter_code_points_.end());
  byte_delimiters_ = is_ascii(options_.filters) && options_.split.size() == 1 && static_cast<unsigned char>(options_.split[0]) < 0x80;
  if (byte_delimiters_) {
    for (std::uint32_t cp : filter_code_points_) is_delimiter_[cp] = true;
    is_delimiter_[static_cast<unsigned char>(options_.split[0])] = true;
  }
}

bool WordSplitter::is_filter(std::uint32_t cp) const {
  return std::binary_search(filter_code_points_.begin(), filter_code_points_.end(), cp);
}

void WordSplitter::split(std::string_view text, Scratch& scratch, std::vector<std::string_view>& out, const KnownWords* known) const {
  if (options_.deobfuscate) {  // 0. what an obfuscation hides, read
    scratch.deobfuscated = deobfuscate(text, known);
    text = scratch.deobfuscated;
  }
  // 1. lower (Python's full mapping)
  std::string_view s = text;
  if (options_.lower) {
    scratch.lowered.clear();
    python_lower_append(text, scratch.lowered);
    s = scratch.lowered;
  }
  // char_level: every code point is a token.
  if (options_.char_level) {
    for (std::size_t i = 0; i < s.size();) {
      std::size_t len;
      decode_at(s, i, len);
      out.push_back(s.substr(i, len));
      i += len;
    }
    return;
  }
  // 2.-4. filter -> split -> drop empty strings
  if (byte_delimiters_) {
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (is_delimiter_[static_cast<unsigned char>(s[i])]) {
        if (i > start) out.push_back(s.substr(start, i - start));
        start = i + 1;
      }
    }
    if (s.size() > start) out.push_back(s.substr(start));
    return;
  }
  scratch.filtered.clear();
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len;
    const std::uint32_t cp = decode_at(s, i, len);
    if (is_filter(cp))
      scratch.filtered += options_.split;
    else
      scratch.filtered.append(s.substr(i, len));
    i += len;
  }
  const std::string_view f = scratch.filtered;
  const std::string_view sep = options_.split;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = f.find(sep, start);
    const std::size_t end = at == std::string_view::npos ? f.size() : at;
    if (end > start) out.push_back(f.substr(start, end - start));
    if (at == std::string_view::npos) break;
    start = at + sep.size();
  }
}

std::vector<std::string> WordSplitter::split(std::string_view text) const {
  Scratch scratch;
  std::vector<std::string_view> views;
  split(text, scratch, views);
  return std::vector<std::string>(views.begin(), views.end());
}

}  // namespace attn::text
