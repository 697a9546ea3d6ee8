#pragma once
/// A generator of Kaggle-Jigsaw-format toxic-comment CSVs (the real file needs a Kaggle account):
/// the file's layout and quirks (quoted multi-line comments with LF and CRLF, doubled quotes,
/// non-ASCII text, a long tail of lengths, a few empty comments) and six labels that are learnable
/// from words and correlated like Jigsaw's: every severe_toxic row is toxic, insults and obscene
/// comments are toxic, threats and identity hate are rare.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attn::data {

struct ToxicCorpusOptions {
  std::int64_t rows = 20000;
  std::uint64_t seed = 1;
  /// Fraction of rows whose labels are flipped at random (label noise, as human raters add).
  double label_noise = 0.01;
};

/// Writes the CSV (header: "id","comment_text","toxic","severe_toxic","obscene","threat",
/// "insult","identity_hate"). The same options always give the same bytes.
void write_toxic_corpus(std::ostream& out, const ToxicCorpusOptions& options);

/// Civil Comments in the layout of Jigsaw's 2019 competition (its real file needs a Kaggle
/// account): "id","target","comment_text", the subtypes "severe_toxicity","obscene",
/// "identity_attack","insult","threat", the nine scored identity columns, the sixth subtype
/// "sexual_explicit" (where the 2019 file has it), then "identity_annotator_count",
/// "toxicity_annotator_count". Every label is a share of raters (k / n,
/// n the row's toxicity_annotator_count); a quarter of the rows have their identities annotated
/// (shares of identity_annotator_count raters), the others leave them empty. A third of the
/// comments name an identity; those naming one of `biased` are toxic `bias` times as often as the
/// others (the data's unintended bias a model then learns), whatever their other words.
struct CivilCorpusOptions {
  std::int64_t rows = 20000;
  std::uint64_t seed = 1;
  std::vector<std::string> biased = {"homosexual_gay_or_lesbian", "muslim", "black"};
  double bias = 3.0;
};
void write_civil_corpus(std::ostream& out, const CivilCorpusOptions& options);

/// E-mail-like documents for hierarchical models, in the same layout and labels: a greeting, 3 to
/// 14 sentences of everyday talk in paragraphs, a sign-off; in about a third of them ONE sentence
/// carries the labels (an insult, a threat, identity hate), anywhere in the body; a quarter of all
/// documents (toxic or not) also quote the civility policy, a sentence with the same bad words that
/// carries no label. An extra last column, "evidence", is the 1-based number of the carrying
/// sentence among the text's sentences as ICU splits them (text/sentences.h), 0 when none.
struct DocumentCorpusOptions {
  std::int64_t rows = 5000;
  std::uint64_t seed = 1;
  double toxic_rate = 0.35;
};
void write_document_corpus(std::ostream& out, const DocumentCorpusOptions& options);

/// Posts in SemEval-2021 Toxic Spans' layout ("spans","text"; spans a JSON list of the marked
/// characters' 0-based offsets), for span taggers: one to three sentences of everyday words; in most
/// posts an insult (a trigger word, its letters marked, not the punctuation after it nor the
/// intensifier before it) or a threat (the whole phrase marked); some posts quote the civility
/// policy (the same words, unmarked) and some are marked nowhere ("[]"). ASCII only, so offsets are
/// bytes and code points alike.
struct SpansCorpusOptions {
  std::int64_t rows = 5000;
  std::uint64_t seed = 1;
};
void write_spans_corpus(std::ostream& out, const SpansCorpusOptions& options);

}  // namespace attn::data
