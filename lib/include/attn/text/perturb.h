#pragma once
/// Words misspelt on purpose, made deterministically: what `attn robustness` scores a model under.
/// Hosseini et al. (2017) showed such edits ("idiiot", "st.upid", "f*ck") turn a toxicity model's
/// score around; each perturbation here is one kind of edit, made to a share of a text's words with
/// a seeded generator of attn's own (SplitMix64), so the same seed gives the same text on every
/// platform.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace attn::text {

enum class Perturbation {
  kRepeat,       ///< a letter inside the word repeated twice more: stupid -> stuuupid
  kLeet,         ///< a letter replaced by its digit: idiot -> id1ot (a4 e3 i1 o0 s5 t7 l1 g9 b8)
  kPunctuation,  ///< a '.', '-' or '_' inserted inside: stupid -> st.upid
  kSpace,        ///< a space inserted inside: stupid -> stu pid
  kMask,         ///< a letter inside (a vowel when there is one) replaced by '*': fuck -> f*ck
  kHomoglyph,    ///< a Latin letter replaced by its Cyrillic look-alike: idiot -> іdiot (U+0456)
  // The evasions of issue 59's attacks (Kurita et al. 2019, Wang et al. 2023's obfuscation taxonomy):
  kSpaced,        ///< every letter apart: stupid -> s t u p i d
  kPunctuation2,  ///< two marks inside: stupid -> st..upid ('.', '-', '_' or '*' twice)
  kZeroWidth,     ///< an invisible character inside (U+200B, U+200C or U+200D): stupid -> stu\u200Bpid
  kMixed,         ///< a Cyrillic look-alike and an invisible character together: stupid -> ѕtu\u200Bpid
  kNoVowels,      ///< the vowels after the first letter dropped: fuck -> fck, stupid -> stpd
  kSuffix,        ///< two letters or digits appended: stupid -> stupidzq
};

struct PerturbationInfo {
  Perturbation perturbation;
  const char* name;     ///< as --perturbations spells it
  const char* example;  ///< what it does to "stupid"
  /// Drawn by `attn train --misspell` when --misspell-edits is not given: the first six, the edits
  /// training has always drawn, so that the others stay unseen by a model that trained on these.
  bool misspell_default;
};
/// Every perturbation, in one list.
const std::vector<PerturbationInfo>& perturbations();
const char* perturbation_name(Perturbation p);
/// By name; an unknown one throws std::invalid_argument naming `flag` and listing the names.
Perturbation parse_perturbation(const std::string& name, const std::string& flag);

struct PerturbOptions {
  double rate = 0.3;       ///< the share of the target words changed (each drawn on its own)
  std::uint64_t seed = 1;  ///< with the row number, what each draw depends on
  /// The target words, lower-case (e.g. a lexicon of toxic words); empty: every word of 4 or more
  /// letters. A word is a run of ASCII letters; matching ignores case.
  std::unordered_set<std::string> words;
};

struct PerturbedText {
  std::string text;
  std::int64_t targets = 0;  ///< target words in the text
  std::int64_t changed = 0;  ///< of them, changed
};

/// `text` with perturbation `p` made to each target word with probability o.rate, the draws
/// depending on (o.seed, row, p) only. Bytes outside the changed words are kept as they are; the
/// result is valid UTF-8 when `text` is.
PerturbedText perturb(const std::string& text, Perturbation p, const PerturbOptions& o, std::uint64_t row);

/// Words misspelt for training (attn train --misspell): as perturb, but each changed word gets one of
/// `kinds` (not empty), drawn per word; the draws depend on (o.seed, row) only.
PerturbedText misspell(const std::string& text, const std::vector<Perturbation>& kinds, const PerturbOptions& o, std::uint64_t row);

}  // namespace attn::text
