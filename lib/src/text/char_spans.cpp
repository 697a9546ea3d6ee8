// Character spans (see char_spans.h).
#include "attn/text/char_spans.h"

#include <algorithm>
#include <stdexcept>

#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <nlohmann/json.hpp>

#include "attn/text/unicode.h"

namespace attn::text {
namespace {

bool is_separator(unsigned char byte) { return byte == ' ' || byte == '\t' || byte == '\n'; }

/// The code points of bytes [begin, end) of `text`, each with its byte offset.
std::vector<std::pair<UChar32, std::size_t>> decoded(std::string_view text, std::size_t begin, std::size_t end) {
  std::vector<std::pair<UChar32, std::size_t>> out;
  const auto* s = reinterpret_cast<const std::uint8_t*>(text.data());
  auto i = static_cast<std::int32_t>(begin);
  while (static_cast<std::size_t>(i) < end) {
    const auto at = static_cast<std::size_t>(i);
    UChar32 c;
    U8_NEXT(s, i, static_cast<std::int32_t>(end), c);
    out.emplace_back(c, at);
  }
  return out;
}

}  // namespace

std::int64_t code_points(std::string_view text) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < text.size(); i += utf8_sequence_length(static_cast<unsigned char>(text[i]))) ++n;
  return n;
}

std::vector<WordRange> word_ranges(std::string_view text) {
  std::vector<WordRange> out;
  std::int64_t c = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t n = std::min(utf8_sequence_length(byte), text.size() - i);
    if (is_separator(byte)) {
      in_word = false;
    } else {
      if (!in_word) out.push_back({c, c, i, i});
      in_word = true;
      out.back().end = c + 1;
      out.back().byte_end = i + n;
    }
    i += n;
    ++c;
  }
  return out;
}

std::vector<std::int64_t> chosen_word_offsets(std::string_view text, const std::vector<bool>& chosen) {
  const std::vector<WordRange> words = word_ranges(text);
  if (chosen.size() != words.size())
    throw std::invalid_argument("spans: " + std::to_string(chosen.size()) + " choices for " + std::to_string(words.size()) + " words");
  std::vector<std::int64_t> out;
  std::int64_t previous_end = -1;  // the last chosen word's covered end, when the word before was chosen
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (!chosen[w]) {
      previous_end = -1;
      continue;
    }
    // The word's code points; trimmed to its first and last letter or digit, if it has one.
    const auto points = decoded(text, words[w].byte_begin, words[w].byte_end);
    std::int64_t first = 0, last = static_cast<std::int64_t>(points.size());
    while (first < last && !u_isalnum(points[static_cast<std::size_t>(first)].first)) ++first;
    while (last > first && !u_isalnum(points[static_cast<std::size_t>(last - 1)].first)) --last;
    if (first == last) first = 0, last = static_cast<std::int64_t>(points.size());
    const std::int64_t begin = words[w].begin + first, end = words[w].begin + last;
    for (std::int64_t c = previous_end < 0 ? begin : previous_end; c < end; ++c) out.push_back(c);
    previous_end = end;
  }
  return out;
}

std::vector<bool> words_touched(std::string_view text, const std::vector<std::int64_t>& offsets) {
  return words_touched(word_ranges(text), offsets);
}

std::vector<bool> words_touched(const std::vector<WordRange>& words, const std::vector<std::int64_t>& offsets) {
  std::vector<bool> out(words.size(), false);
  for (const std::int64_t at : offsets) {
    const auto it = std::upper_bound(words.begin(), words.end(), at, [](std::int64_t c, const WordRange& w) { return c < w.end; });
    if (it != words.end() && at >= it->begin) out[static_cast<std::size_t>(it - words.begin())] = true;
  }
  return out;
}

std::vector<std::int64_t> parse_span_offsets(const std::string& cell, std::int64_t characters, const std::string& where) {
  nlohmann::json spans;
  try {
    spans = nlohmann::json::parse(cell);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(where + " not a list of integers: '" + cell + "'");
  }
  if (!spans.is_array()) throw std::runtime_error(where + " not a list of integers: '" + cell + "'");
  std::vector<std::int64_t> out;
  out.reserve(spans.size());
  for (const nlohmann::json& s : spans) {
    if (!s.is_number_integer()) throw std::runtime_error(where + " not a list of integers: '" + cell + "'");
    const auto at = s.get<std::int64_t>();
    if (at < 0 || at >= characters)
      throw std::runtime_error(where + " index " + std::to_string(at) + " outside the text's " + std::to_string(characters) +
                               " characters");
    out.push_back(at);
  }
  return out;
}

}  // namespace attn::text
