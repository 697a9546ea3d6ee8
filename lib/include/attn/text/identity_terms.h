#pragma once
/// Identity terms for a counterfactual bias audit (`attn audit`) and counterfactual training (`attn
/// train --counterfactual`): the built-in list, a list read from a file, finding a term's mentions
/// in a text and swapping them for another term, a drawn counterfactual copy of a text, and the
/// sentence templates the audit fills with each term (a "madlibs" set in the manner Dixon et al.
/// 2018 describe, written for attn). No LibTorch here.
///
/// A term is one or more words, lower-case ASCII letters compared without case. It is mentioned
/// where the text holds it at word boundaries (the characters either side are not ASCII letters,
/// digits or bytes of a non-ASCII character), optionally followed by a plural "s" ("Muslims"
/// mentions "muslim"); the words of a several-word term are separated by one space. A swap replaces
/// the mention by the other term in the mention's case: all capitals stay capitals ("GAY" ->
/// "STRAIGHT"), a capital first letter stays one ("Muslim," -> "Christian,"), the rest lower-case;
/// the plural "s" and the punctuation around stay as they were.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::text {

/// The built-in terms (24, each usable as an adjective: "a <term> person").
const std::vector<std::string>& builtin_identity_terms();

/// A term list from a file: one term per line (trailing spaces and CR dropped, lower-cased). An
/// empty line, a repeated term, a character that is not an ASCII letter or a space, or fewer than 2
/// terms: std::runtime_error naming the file and line.
std::vector<std::string> read_identity_terms(const std::string& path);

/// Where a term is mentioned: text[begin, end) is the term itself (the plural "s" after it not included).
struct Mention {
  std::size_t begin = 0, end = 0;
};
std::vector<Mention> find_mentions(const std::string& text, const std::string& term);
/// `text` with every mention of `from` replaced by `to` in the mention's case (see above).
std::string swap_term(const std::string& text, const std::string& from, const std::string& to);

/// A counterfactual copy of `text` (counterfactual logit pairing, Garg et al. 2019): one of the
/// `terms` it mentions, drawn, swapped for another term of the list, drawn, both by `seed` (the
/// same text and seed, the same copy). A text that mentions none: nullopt.
std::optional<std::string> counterfactual_copy(const std::string& text, const std::vector<std::string>& terms, std::uint64_t seed);

/// A template sentence filled with a term: whether its filler is toxic, and the term's words as
/// entries of the sentence's space-separated words [first_word, first_word + words).
struct TemplateSentence {
  std::string text;
  bool toxic = false;
  std::size_t first_word = 0, words = 0;
  std::string filler;  ///< the word the frame was filled with ("stupid", "kind", "hate", ...)
};
/// Every template filled with `term` and each of its fillers, toxic and not, half each.
std::vector<TemplateSentence> template_sentences(const std::string& term);

}  // namespace attn::text
