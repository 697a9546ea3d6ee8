#pragma once
/// `attn robustness` as a library call: a labelled file scored as it is and again under each
/// perturbation of its texts (text/perturb.h: words misspelt on purpose), with each metric's drop
/// and the share of decisions that flip. Torch-free header, like commands.h.
#include <cstdint>
#include <string>
#include <vector>

#include "attn/analyses/commands.h"
#include "attn/data/inputs.h"
#include "attn/text/perturb.h"

namespace attn::analyses {

struct RobustnessRequest {
  std::string model;                              ///< run directory or model.pt (a text classifier)
  std::string csv;                                ///< labelled rows, in any format the model reads
  data::Inputs options;                           ///< the task's evaluate inputs (columns)
  std::vector<text::Perturbation> perturbations;  ///< none: every one
  double rate = 0.3;                              ///< the share of the target words each perturbation changes
  std::uint64_t seed = 1;
  std::string words;  ///< a file of target words, one per line (e.g. a toxic lexicon); "": every word of 4 or more letters
  std::int64_t batch_size = tasks::kScoringBatchSize;
  int threads = 1;
  std::string json;  ///< write the figures here ("" = none)
};

/// Scores `csv` clean, then once per perturbation (the same seeded edits every run). Returns the
/// table to print; the JSON holds, per perturbation, the words changed, the metrics, their drops
/// (clean - perturbed) and "flipped": the share of rows whose decision changed (one class per row:
/// the most probable class; 0/1 labels: any label's p >= 0.5). A file without labels, or a model
/// that does not read texts, throws std::invalid_argument.
std::string robustness(const RobustnessRequest& request);

}  // namespace attn::analyses
