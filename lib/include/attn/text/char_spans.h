#pragma once
/// Character spans: which characters of a text are marked, counted as SemEval-2021's Toxic Spans
/// counts them (0-based code points, Python's str indices), and how they meet the text's words.
/// A word is a run of characters between spaces, tabs and newlines, as attn explain splits a text.
///
/// From words to characters: on Toxic Spans' training posts (tsd_train.csv, 7,939 posts), people
/// marked a word's letters but mostly left out the punctuation around it ("idiot." marked as
/// "idiot": 4,530 words; 400 had letters left out) and marked the spaces between two marked words
/// (13,422 of 13,560). So a chosen word covers its characters from its first to its last letter or
/// digit (all of it when it has none, an emoji say), and two chosen words side by side also cover
/// what lies between them. Choosing exactly the words people touched then gives their characters
/// back at a character F1 of 0.992 (0.963 taking whole words, 0.976 without the gaps).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

/// A word of a text: its code points [begin, end) and its bytes [byte_begin, byte_end).
struct WordRange {
  std::int64_t begin = 0, end = 0;
  std::size_t byte_begin = 0, byte_end = 0;
};

/// The code points of `text` (UTF-8; an invalid byte counts as one, as a replacement character would).
std::int64_t code_points(std::string_view text);

/// Each word of `text` (runs without a space, tab or newline; a carriage return is part of its word
/// as attn explain's words keep it), in order.
std::vector<WordRange> word_ranges(std::string_view text);

/// The characters (sorted code point offsets) that the words `chosen[w]` of `text` cover, as the
/// header says: each from its first to its last letter or digit, and the gap between two chosen
/// neighbours. `chosen` has one entry per word of word_ranges(text).
std::vector<std::int64_t> chosen_word_offsets(std::string_view text, const std::vector<bool>& chosen);

/// For each word of `text`, whether any of the `offsets` (code points) falls in it.
std::vector<bool> words_touched(std::string_view text, const std::vector<std::int64_t>& offsets);
/// The same for words already split (word_ranges' of the text).
std::vector<bool> words_touched(const std::vector<WordRange>& words, const std::vector<std::int64_t>& offsets);

/// A `spans` cell as SemEval ships it ("[3, 4, 5]", "[]"): the offsets, checked against a text of
/// `characters` code points. Throws std::runtime_error starting with `where` (file:line: column
/// (spans)) for a cell that is not a list of integers, or an offset that is negative or beyond the text.
std::vector<std::int64_t> parse_span_offsets(const std::string& cell, std::int64_t characters, const std::string& where);

}  // namespace attn::text
