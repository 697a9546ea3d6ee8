// The text classifier's training inputs: the table of declarations and fields, the rules between
// them, and what the model decides.
#include "text_training.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attn/data/prepare.h"
#include "attn/text/identity_terms.h"
#include "attn/text/subwords.h"
#include "text_dataset.h"

namespace attn::tasks {
namespace {

using data::Field;
using data::InputRule;
using data::InputSpec;
using SpecKind = InputSpec::Kind;
using TI = TextTrainingInputs;

// (the table reads best as written)
// clang-format off
const std::vector<Field<TI>>& training_fields() {
  static const std::vector<Field<TI>> table = {
      {{"data", "Text models: prepared data directory (attn prepare --out DIR) instead of --csv", ""}, &TI::data},
      {{"max-sentences", "Hierarchical models: sentences of a document read (default: the data's 95th percentile, at most 64)", "",
        SpecKind::kValue, "Sentences (hierarchical models)"}, &TI::max_sentences},
      {{"subwords",
        "Text models with a subword table (bilstm-attention, transformer-classifier): every word is also its "
        "character n-grams (fastText's, n = 3..6), so misspelt and unseen words are read too; the default "
        "with --label-column (one class per row)",
        "", SpecKind::kFlag, "Subwords"}, &TI::subwords},
      {{"misspell",
        "Text models with subwords: train on words misspelt on purpose, this share of each training text's words "
        "of 4+ letters edited as attn robustness does (one edit per word, drawn; the held-out rows too)",
        "0", SpecKind::kValue, "Subwords"}, &TI::misspell},
      {{"misspell-edits", "With --misspell: the edits drawn from (default: repeat, leet, punctuation, space, mask, homoglyph)", "", SpecKind::kValue, "Subwords"},
       &TI::misspell_edits},
      {{"skeletons",
        "Text models with subwords: each word is also the n-grams of its consonant skeleton (its vowels after the "
        "first letter dropped: stupid -> stpd), so words written without their vowels read as the word",
        "", SpecKind::kFlag, "Subwords"}, &TI::skeletons},
      {{"word-only", "Text models: whole words only, no subwords (with --label-column too)", "", SpecKind::kFlag, "Subwords"}, &TI::word_only},
      {{"subword-buckets", "With --subwords: the n-gram hash rows", std::to_string(text::kDefaultSubwordBuckets), SpecKind::kValue, "Subwords"},
       &TI::subword_buckets},
      {{"rationales",
        "Text models: human rationales to train the attention on (HateXplain's supervision), ERASER's annotations "
        "(.json/.jsonl) or a Toxic Spans .csv; each applies to the training rows whose text is its text",
        "", SpecKind::kValue, "Rationales"}, &TI::rationales},
      {{"rationale-docs", "With --rationales: ERASER's documents (default: docs.jsonl beside the annotations)", "", SpecKind::kValue,
        "Rationales"}, &TI::rationale_docs},
      {{"rationale-weight", "With --rationales: lambda, the weight of the cross-entropy between the attention and a row's rationale", "1",
        SpecKind::kValue, "Rationales"}, &TI::rationale_weight},
      {{"rationale-target",
        "With --rationales: the attention a rationale asks for: 'words' (each marked word's token the same share, "
        "HateXplain's) or 'spans' (each marked span the same share, split among its tokens)",
        "words", SpecKind::kValue, "Rationales"}, &TI::rationale_target},
      {{"weight-column", "Text models: each row's weight in the loss from this column (a number >= 0; the weights are scaled to mean 1)",
        "", SpecKind::kValue, "Bias-aware training"}, &TI::weight_column},
      {{"identity-weighting",
        "Text models with 0/1 labels: weigh rows by identity as 2019's solutions did: 1 + subgroup + background "
        "positive + subgroup negative (a subgroup: an identity column >= 0.5; positive: the first label's)",
        "", SpecKind::kFlag, "Bias-aware training"}, &TI::identity_weighting},
      {{"identities",
        "With --identity-weighting: the identity columns (default: those of Jigsaw 2019's 9 scored identities the file has)", "",
        SpecKind::kValue, "Bias-aware training"}, &TI::identities},
      {{"aux-labels",
        "Text models with 0/1 labels: more label columns trained as auxiliary outputs (e.g. 2019's subtypes), "
        "reported apart (aux_auc), not in the other metrics",
        "", SpecKind::kValue, "Bias-aware training"}, &TI::aux_labels},
      {{"counterfactual",
        "Text models: counterfactual logit pairing (Garg et al. 2019): each training row that mentions an identity term "
        "is read again with that term swapped for another, and the gap between the two rows' logits is added to the loss",
        "", SpecKind::kFlag, "Bias-aware training"}, &TI::counterfactual},
      {{"counterfactual-weight", "With --counterfactual: lambda, the weight of the logit gap in the loss", "1", SpecKind::kValue,
        "Bias-aware training"}, &TI::counterfactual_weight},
      {{"counterfactual-terms",
        "With --counterfactual: the identity terms swapped, one per line (default: attn audit's " +
            std::to_string(text::builtin_identity_terms().size()) + " built-in terms)",
        "", SpecKind::kValue, "Bias-aware training"}, &TI::counterfactual_terms},
      {{"max-words", "Hierarchical models: words of a sentence read (default: the data's 95th percentile, at most 100)", "", SpecKind::kValue,
        "Sentences (hierarchical models)"}, &TI::max_words},
  };
  return table;
}

/// The rules between the inputs, checked in this order (the first broken one is the error).
const std::vector<InputRule>& training_rules() {
  static const std::string rereads = "re-reads the texts: give the CSV (--csv), not --data";
  static const std::string columns = "reads columns of the CSV: give the CSV (--csv), not --data";
  static const std::vector<InputRule> table = [] {
    std::vector<InputRule> r = {
        {InputRule::Kind::kOneOf, "subwords", "word-only", ""},
        {InputRule::Kind::kNotWith, "subwords", "data", rereads},
        {InputRule::Kind::kAppliesWith, "rationale-docs", "rationales", ""},
        {InputRule::Kind::kAppliesWith, "rationale-weight", "rationales", ""},
        {InputRule::Kind::kAppliesWith, "rationale-target", "rationales", ""},
        {InputRule::Kind::kNotWith, "rationales", "data", rereads},
        {InputRule::Kind::kAppliesWith, "identities", "identity-weighting", ""},
        {InputRule::Kind::kNotWith, "weight-column", "data", columns},
        {InputRule::Kind::kNotWith, "identity-weighting", "data", columns},
        {InputRule::Kind::kNotWith, "aux-labels", "data", columns},
        {InputRule::Kind::kAppliesWith, "counterfactual-weight", "counterfactual", ""},
        {InputRule::Kind::kAppliesWith, "counterfactual-terms", "counterfactual", ""},
        {InputRule::Kind::kNotWith, "counterfactual", "data", rereads},
        {InputRule::Kind::kOneOf, "csv", "data", ""},
    };
    for (const InputSpec& s : data::prepare_inputs())  // what prepares a CSV has nothing to do with prepared data
      if (s.name != "csv") r.push_back({InputRule::Kind::kNotWith, s.name, "data", "prepares a --csv; the data in --data was prepared already"});
    return r;
  }();
  return table;
}
// clang-format on

/// A hierarchical model's sizes: 0 (from the data) unless given, each in 1..text::kSentenceLimit.
std::int64_t layout_size(const data::Given<std::int64_t>& size, const char* flag, const models::ModelEntry& model) {
  if (!size.given) return 0;
  if (!model.reads_sentences)
    throw std::invalid_argument(std::string("--") + flag + " applies to hierarchical models; " + model.name + " reads words");
  if (size.value < 1 || size.value > text::kSentenceLimit)
    throw std::invalid_argument(std::string("--") + flag + " must be in 1.." + std::to_string(text::kSentenceLimit) + ", got " +
                                std::to_string(size.value));
  return size.value;
}

}  // namespace

std::vector<data::InputSpec> text_training_specs() { return data::specs_of(training_fields()); }

TextTrainingInputs read_text_training(const data::Inputs& in, const models::ModelEntry& model) {
  TextTrainingInputs t = data::read_fields(in, training_fields());
  t.layout.max_sentences = layout_size(t.max_sentences, "max-sentences", model);
  t.layout.max_words = layout_size(t.max_words, "max-words", model);
  data::check_rules(in, training_rules());
  const bool has_table =
      std::any_of(model.keys.begin(), model.keys.end(), [](const models::ConfigKey& k) { return k.name == "subword_buckets"; });
  // One class per row (the public corpora: HateXplain, Davidson, OLID) reads subwords by default when
  // the model has their table and the texts are read here: docs/benchmarks.md#real-data-hatexplain.
  t.reads_subwords = t.subwords.value || (!t.word_only.value && has_table && !t.data.given && reads_one_class_per_row(in));
  if (t.subword_buckets.given && !t.reads_subwords) throw std::invalid_argument("--subword-buckets applies with --subwords");
  if (t.skeletons.value && !t.reads_subwords) throw std::invalid_argument("--skeletons applies with --subwords");
  if (t.reads_subwords) {
    if (!has_table) throw std::invalid_argument("--subwords: " + model.name + " has no subword embedding (it reads whole words)");
    if (t.subword_buckets.value < 1 || t.subword_buckets.value > (std::int64_t{1} << 30))
      throw std::invalid_argument("--subword-buckets must be in 1..1073741824, got " + std::to_string(t.subword_buckets.value));
  }
  // --misspell: the training texts' words misspelt on purpose, read again by their subwords.
  const double misspell = t.misspell.value;
  if (!(misspell >= 0 && misspell <= 1)) throw std::invalid_argument("--misspell must be in 0..1, got '" + t.misspell.text + "'");
  if (t.misspell_edits.given && misspell == 0) throw std::invalid_argument("--misspell-edits applies with --misspell");
  if (misspell > 0 && !t.reads_subwords)
    throw std::invalid_argument(
        "--misspell applies to a model reading subwords (--subwords; the default with --label-column): "
        "a word-only model drops misspelt words");
  if (misspell > 0 && t.rationales.given) throw std::invalid_argument("give one of --misspell and --rationales");
  for (const std::string& name : t.misspell_edits.value) t.edits.push_back(text::parse_perturbation(name, "--misspell-edits"));
  if (t.edits.empty())
    for (const text::PerturbationInfo& p : text::perturbations())
      if (p.misspell_default) t.edits.push_back(p.perturbation);
  if (t.rationales.given) {
    if (t.rationale_weight.value < 0)
      throw std::invalid_argument("--rationale-weight: '" + t.rationale_weight.text + "' is not a number >= 0");
    if (t.rationale_target.value != "words" && t.rationale_target.value != "spans")
      throw std::invalid_argument("--rationale-target: '" + t.rationale_target.value + "' is not words or spans");
    t.target = t.rationale_target.value == "spans" ? RationaleTarget::kSpans : RationaleTarget::kWords;
  }
  if (t.counterfactual.value) {
    if (!(t.counterfactual_weight.value > 0) || !std::isfinite(t.counterfactual_weight.value))
      throw std::invalid_argument("--counterfactual-weight: '" + t.counterfactual_weight.text + "' is not a number > 0");
    t.terms = t.counterfactual_terms.given ? text::read_identity_terms(t.counterfactual_terms.value) : text::builtin_identity_terms();
  }
  if (t.identities.given && t.identities.value.empty()) throw std::invalid_argument("--identities: no column named");
  if (t.data.given && model.reads_sentences)
    throw std::invalid_argument("--data: " + model.name + " reads the texts' sentences; give the CSV (--csv)");
  return t;
}

}  // namespace attn::tasks
