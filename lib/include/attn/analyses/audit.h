#pragma once
/// `attn audit`: a counterfactual audit of a text classifier's identity bias, in three parts, each per
/// identity term (text/identity_terms.h: the built-in list or the user's):
///   templates  the project's template sentences filled with each term and a toxic or a kind filler
///              (text::template_sentences), scored: per term the mean toxicity of its kind sentences
///              and the share of them decided toxic (false positives), and Jigsaw 2019's subgroup,
///              BPSN and BNSP AUC with a term's sentences as its subgroup (metrics/bias.h), with the
///              power means and final metric over the terms;
///   swaps      (with --csv) every row of the user's file that mentions a term, scored again with
///              each other term in its place (case and punctuation kept): per term put in, the mean
///              and the largest shift of toxicity (swapped - original) over the rows it went into,
///              and the rows whose decision flips;
///   why        integrated gradients of the toxicity on each term's kind template sentences: the
///              term's own importance (the sum over its words' tokens), its mean per term; a term
///              the model's vocabulary lacks has none.
/// "Toxicity" is the probability of --label (default: the model's first label) or, with --benign C,
/// 1 - p(C) (e.g. HateXplain's "normal"); a decision is toxic when p(label) >= 0.5 (0/1 labels), or
/// when the most probable class is the label (or is not the benign class) for one class per row.
/// Torch-free header.
#include <cstdint>
#include <string>

#include "attn/analyses/commands.h"
#include "attn/data/inputs.h"
#include "attn/models/methods.h"

namespace attn::analyses {

struct AuditRequest {
  std::string model;                  ///< run directory or model.pt (a text classifier)
  std::string terms_file;             ///< the identity terms, one per line ("": text::builtin_identity_terms())
  std::string label;                  ///< the label whose probability is the toxicity ("" the first)
  std::string benign;                 ///< or: the class whose probability's complement is ("" none)
  data::Inputs options;               ///< the task's explain inputs: --csv (the swaps' rows), --text-column, --rows
  int steps = models::kDefaultSteps;  ///< integrated gradients' steps (the why part)
  bool why = true;                    ///< compute the why part
  std::int64_t batch_size = tasks::kScoringBatchSize;
  std::int64_t examples = 20;  ///< flipped rows listed
  std::string json, html;      ///< outputs ("" = none), written together once all is computed
};

/// Runs the audit; returns the table to print.
std::string audit(const AuditRequest& request);

}  // namespace attn::analyses
