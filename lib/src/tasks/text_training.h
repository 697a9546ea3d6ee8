#pragma once
// A text classifier's `attn train` inputs, typed and read in one place (text_training.cpp): each
// input declared once beside the field it fills, the rules between inputs as a checked table, and
// what depends on the model resolved here. The data files (text_dataset*.cpp) read this struct,
// never an input by name. Internal to the tasks layer.
#include <cstdint>
#include <string>
#include <vector>

#include "attn/data/inputs.h"
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "attn/text/perturb.h"
#include "attn/text/sentences.h"

namespace attn::tasks {

/// What `attn train` reads for a text classifier besides the prepare inputs (data/prepare.h).
struct TextTrainingInputs {
  data::Given<std::string> data;  ///< --data: a prepared directory instead of --csv
  data::Given<std::int64_t> max_sentences, max_words;
  data::Given<bool> subwords, word_only, skeletons;
  data::Given<std::int64_t> subword_buckets;
  data::Given<double> misspell;
  data::Given<std::vector<std::string>> misspell_edits;
  data::Given<std::string> rationales, rationale_docs;
  data::Given<double> rationale_weight;
  data::Given<std::string> rationale_target;
  data::Given<std::string> weight_column;
  data::Given<bool> identity_weighting;
  data::Given<std::vector<std::string>> identities, aux_labels;
  data::Given<bool> counterfactual;
  data::Given<double> counterfactual_weight;
  data::Given<std::string> counterfactual_terms;

  // Resolved for the model by read_text_training():
  text::SentenceLayout layout;            ///< hierarchical models' (0: from the data)
  bool reads_subwords = false;            ///< --subwords, or its default (one class per row, a model with the table)
  std::vector<text::Perturbation> edits;  ///< --misspell's, every one by default
  RationaleTarget target = RationaleTarget::kWords;
  std::vector<std::string> terms;  ///< --counterfactual's identity terms (its file's, or the built-in ones)
};

/// The inputs' declarations, in --help's order (--data first).
std::vector<data::InputSpec> text_training_specs();
/// `in` read and checked for `model` (bad values and combinations throw std::invalid_argument
/// naming the flags).
TextTrainingInputs read_text_training(const data::Inputs& in, const models::ModelEntry& model);

}  // namespace attn::tasks
