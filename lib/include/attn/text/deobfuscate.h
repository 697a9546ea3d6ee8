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
///  - three or more single letters one space apart joined (s t u p i d -> stupid).
/// What it cannot undo (a '*' for a letter, dropped vowels, a space inside, letters appended) is left
/// to subwords. A text with none of these comes back byte for byte; the result is valid UTF-8 when
/// the text is.
#include <string>
#include <string_view>

namespace attn::text {

std::string deobfuscate(std::string_view text);

}  // namespace attn::text
