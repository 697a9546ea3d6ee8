#pragma once
/// Undoes the obfuscations people use to slip a word past a filter, before a model's tokenizer reads
/// the text (`attn train --deobfuscate`, then everything that model reads): a normalising reader,
/// the defence against rewrites it never trained on that needs no list of words.
///
///  - invisible characters dropped: U+200B, U+200C, U+200D, U+2060, U+FEFF, U+00AD (soft hyphen);
///  - in a word that has a Latin letter, the Cyrillic and Greek look-alikes of Latin letters read
///    as those letters (ѕtupid -> stupid; a word in Cyrillic alone stays as it is);
///  - a run of three or more of one letter cut to one (stuuupid -> stupid: no English word has three);
///  - '.', '_' or '*' (one or two) between two letters of a word dropped (st.upid, st..upid -> stupid);
///  - a digit, '@' or '$' between two letters, or leading two or more letters, read as the letter it
///    stands for: 4 a, 3 e, 1 i, 0 o, 5 s, 7 t, 8 b, 9 g, @ a, $ s (id1ot -> idiot, 5tupid -> stupid;
///    1st, 2nd, 3rd, 4th stay);
///  - three or more single letters one space apart joined (s t u p i d -> stupid; punctuation before
///    the first or after the last stays outside: <u s e r> -> <user>).
/// With a vocabulary (a fitted tokenizer's known words), more steps that a word list needs:
///  - a run of single letters is cut into known words, the fewest, then the most frequent ("f u c k
///    i n g r e t a r d" -> fucking retard, "a r g e n t i n a" -> argentina, "a s t u p i d" -> a
///    stupid); pieces of three letters or more, or "a" or "i". A run with no such cut is read as
///    without a vocabulary;
///  - two pieces of letters one space or one or two '-' apart joined when their join is a known
///    word and one piece is not or both are rarer than it ("stu pid", "st-upid" -> stupid, "st ill"
///    -> still; "a live", "th is", "well-known" stay);
///  - a word's first '*' between two letters read as the letter that makes the most frequent known
///    word ("st*pid", "st*p1d" -> stupid);
///  - an unknown word that is a known word of four letters or more with one or two letters or digits
///    after it read as that word ("stupidzq", "idiot7" -> stupid, idiot; one character off tried
///    first; the stem all letters, its case kept; not a word with '@' or '#', nor one the next step
///    reads whole: "instd" is "instead", not "inst");
///  - a word of three letters or more without vowels after its first letter read as the most
///    frequent known word with that consonant skeleton (text/subwords.h), when it is unknown or ranked
///    at least ten times further down ("stpd", "fck", "btch" -> stupid, fuck, bitch; "gym" stays
///    beside a more frequent "goyim"); a skeleton of two letters ("kk") is not read.
/// What it cannot undo (other letters changed or added: "stpuid", "stupidxyz") is left to subwords.
/// Without a vocabulary, a text with none of these comes back byte for byte; the result is valid
/// UTF-8 when the text is.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace attn::text {

/// A vocabulary for deobfuscate: the words a model reads as themselves (the known words), looked up
/// lowercase (a tokenizer's default).
struct KnownWords {
  /// The rank of a lowercase known word (1 or more; smaller: more frequent; a tokenizer's index), or
  /// nothing for an unknown word.
  std::function<std::optional<std::int32_t>(std::string_view)> rank;
  /// The most frequent known word with this consonant skeleton, or nothing.
  std::function<std::optional<std::string_view>(std::string_view)> with_skeleton;
};

std::string deobfuscate(std::string_view text, const KnownWords* known = nullptr);

}  // namespace attn::text
