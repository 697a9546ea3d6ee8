#pragma once
/// `attn robustness` as a library call: a labelled file scored as it is and again under each
/// perturbation of its texts (text/perturb.h: words misspelt on purpose) at each rate, with each
/// metric's drop and the share of decisions that flip. The words rewritten are every word (or a
/// lexicon's), the words this model relies on in each row (an attacker who reads its explanations),
/// or the words people marked in each row. Torch-free header, like commands.h.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attn/analyses/commands.h"
#include "attn/data/inputs.h"
#include "attn/models/methods.h"
#include "attn/text/perturb.h"

namespace attn::tasks {
class TrainedModel;
}

namespace attn::analyses {

/// Which words of a row a perturbation rewrites.
enum class Targets {
  kGlobal,   ///< every word of 4 or more letters (or the words of RobustnessRequest::words), each with probability rate
  kSalient,  ///< the row's words its model relies on most (salient_method, for its decision): the top rate share of them
  kMarked,   ///< the words people marked in the row (RobustnessRequest::rationales), each with probability rate
};

struct RobustnessRequest {
  std::string model;                              ///< run directory or model.pt (a text classifier)
  std::string csv;                                ///< labelled rows, in any format the model reads
  data::Inputs options;                           ///< the task's evaluate inputs (columns)
  std::vector<text::Perturbation> perturbations;  ///< none: every one
  std::vector<double> rates = {0.3};              ///< the shares of the target words each perturbation changes, each in [0, 1]
  std::uint64_t seed = 1;
  Targets targets = Targets::kGlobal;
  std::string words;  ///< kGlobal: a file of target words, one per line (e.g. a toxic lexicon); "": every word of 4 or more letters
  models::Method salient_method = models::Method::kAttention;  ///< kSalient: what ranks a row's words
  std::string rationales;                                      ///< kMarked: ERASER annotations or a Toxic Spans CSV (rows matched by text)
  std::string rationale_docs;                                  ///< kMarked: ERASER's documents ("": docs.jsonl beside)
  std::int64_t batch_size = tasks::kScoringBatchSize;
  int threads = 1;
  std::string json;  ///< write the figures here ("" = none)
};

/// Scores `csv` clean, then once per perturbation and rate (the same seeded edits every run).
/// Returns the table to print; the JSON holds, per perturbation and rate, the words changed, the
/// metrics, their drops (clean - perturbed) and "flipped": the share of rows whose decision changed
/// (one class per row: the most probable class; 0/1 labels: any label's p >= 0.5). A file without
/// labels, or a model that does not read texts, throws std::invalid_argument; a rationale file none
/// of whose texts is a row's, std::runtime_error naming it.
std::string robustness(const RobustnessRequest& request);

/// What --targets salient rewrites: per row (its 1-based data row, from `texts`), its words (runs of
/// 4 or more ASCII letters, lower case, each once) ranked by how much `method` says `model` relies on
/// each for its decision (the most probable label or class), highest first; a word none of whose
/// tokens the model reads ranks last. A model that is not a text classifier throws std::invalid_argument.
std::map<std::int64_t, std::vector<std::string>> salient_words(tasks::TrainedModel& model, const std::map<std::int64_t, std::string>& texts,
                                                               models::Method method, std::int64_t batch_size);

}  // namespace attn::analyses
