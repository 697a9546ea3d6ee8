#pragma once
/// Text classification (bilstm-attention, transformer-classifier, hierarchical-attention): a CSV's
/// text column tokenised with Keras' Tokenizer and padded with pad_sequences (hierarchical models:
/// split into sentences first, text/sentences.h), 0/1 label columns with multi-label binary
/// cross-entropy, or one class per row (--label-column) with softmax cross-entropy; explained per word (seed 000's get_word_importances,
/// completed) and per sentence.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/io/prepared_data.h"
#include "attn/models/kinds.h"
#include "attn/tasks/task.h"
#include "attn/text/sentences.h"
#include "attn/text/tokenizer.h"

namespace attn::tasks {

/// What a row's human rationale asks of its attention (--rationale-target): the same share for
/// every marked word's token (kWords, HateXplain's supervision), or the same share for every marked
/// span, split evenly among its tokens (kSpans: a word marked on its own weighs more than a word of
/// a marked sentence, as ERASER's span-level IOU-F1 counts them).
enum class RationaleTarget { kWords, kSpans };
NLOHMANN_JSON_SERIALIZE_ENUM(RationaleTarget, {{RationaleTarget::kWords, "words"}, {RationaleTarget::kSpans, "spans"}})

/// config.json's "data" block of a text classifier.
struct TextDataConfig {
  std::string dir;  ///< the prepared data (data.pt, tokenizer.json, prepare.json)
  std::int64_t rows = 0;
  std::int64_t maxlen = 0;  ///< the width the rows were padded or cut to
  text::Side padding = text::Side::kPre;
  text::Side truncating = text::Side::kPre;
  std::vector<std::string> labels;  ///< the 0/1 label columns; one class per row: the classes, in order
  /// One class per row (multi-class, softmax): the column holding it; empty: a 0/1 column per label.
  std::string label_column;
  std::string text_column = "comment_text";
  std::string id_column = "id";
  /// A few rows of the training data's validation end as the tokenizer reads them back (the
  /// explain page's examples, a server's warm-up): from the model's own data, not from code.
  std::vector<std::string> examples;
  /// Hierarchical models: how much of a document they read (rows are then text/sentences.h's ids,
  /// post-padded to max_sentences x max_words); disabled for the models that read words.
  text::SentenceLayout sentences;
  /// Models with subwords (--subwords): the n-gram rows (text/subwords.h); the rows' ids are then a
  /// SubwordVocabulary's. 0: words only.
  std::int64_t subword_buckets = 0;
  /// With subwords (--skeletons): a word's n-gram rows include its consonant skeleton's
  /// (text/subwords.h).
  bool subword_skeletons = false;
  /// Attention trained on human rationales (--rationales): their file and lambda, the weight of the
  /// attention's cross-entropy with a row's rationale in the loss (0: not trained on rationales).
  /// Which tokens of which rows people marked is in dir/rationales.json.
  std::string rationales;
  double rationale_weight = 0;
  RationaleTarget rationale_target = RationaleTarget::kWords;
  /// The label columns hold fractions binarised at this (--target-threshold; 0: they hold 0/1),
  /// in every file the model reads labels from.
  double target_threshold = 0;
  /// Auxiliary outputs (--aux-labels): the last of `labels`, trained with the others (the loss
  /// covers them), reported apart as "aux_auc" and "aux_mean_auc", left out of the other metrics.
  std::vector<std::string> aux_labels;
  /// Bias-aware training: each training row's loss weighed by its weight column (--weight-column)
  /// and, with --identity-weighting, by Jigsaw 2019's identity weights over the `identities`
  /// columns (metrics/bias.h's identity_weights); the weights themselves are in dir/row_weights.json.
  std::string weight_column;
  bool identity_weighting = false;
  std::vector<std::string> identities;
  /// Every text read through text/deobfuscate.h before the tokenizer (--deobfuscate): in training,
  /// and in everything the model reads after. Written to config.json only when set.
  bool deobfuscate = false;
  /// Counterfactual logit pairing (--counterfactual): lambda, the weight of the gap between a row's
  /// logits and those of its identity-swapped copy in the loss (0: none), and the term list
  /// (--counterfactual-terms; empty: the built-in terms). The copies are in dir/counterfactuals.json.
  /// Written to config.json only when set.
  double counterfactual_weight = 0;
  std::string counterfactual_terms;

  bool one_class_per_row() const { return !label_column.empty(); }
  /// The labels scored (those before the auxiliary ones).
  std::size_t scored_labels() const { return labels.size() - std::min(labels.size(), aux_labels.size()); }
  bool weighs_rows() const { return !weight_column.empty() || identity_weighting; }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TextDataConfig, dir, rows, maxlen, padding, truncating, labels, label_column, text_column,
                                                id_column, examples, sentences, subword_buckets, subword_skeletons, rationales,
                                                rationale_weight, rationale_target, target_threshold, aux_labels, weight_column,
                                                identity_weighting, identities, deobfuscate, counterfactual_weight, counterfactual_terms)

const Task& text_classification();

}  // namespace attn::tasks
