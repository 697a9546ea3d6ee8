#pragma once
/// A seed ensemble of a text classifier: `members` copies of one registered model with the same
/// configuration, each with its own initial weights (and dropout), trained side by side on the
/// same batches, each by its own loss (attn train --ensemble N). Read as one model it is a model
/// like any other (its TorchScript methods are the member's, so every command and Python use it):
///   probabilities: the mean of the members' probabilities;
///   logits: what gives that mean through the model's output: log of the mean probability
///     (softmax) or its log-odds (sigmoid), plus `ensemble_bias` (zero until logit adjustment);
///   attention: the mean of the members' attention (each row still sums to 1);
///   embeddings(ids): the members' embeddings side by side [B, T, N x D], which
///     logits_embedded(x, ids) splits again, so that the gradient methods see every member;
///   member_logits(ids): each member's (logits, attention) stacked [N, B, ...] (training's losses).
/// Hierarchical attention levels are the members' means too. A span tagger's ensemble gives per
/// token the members' mean probability (forward), its log-odds plus `ensemble_bias` (logits) and
/// member_logits(ids) [N, B, T]. Models whose entry has `ensembles`.
/// Members are named member0, member1, ...; a file's member count is its config.json's
/// training.ensemble.
#include <string>
#include <vector>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/models/registry.h"

namespace attn::models {

/// The buffer an ensemble's logits end with (what logit adjustment moves).
inline constexpr const char* kEnsembleBias = "ensemble_bias";

/// Throws std::invalid_argument unless `entry` can make an ensemble of `members` (>= 1; more than
/// one: text classifiers and span taggers whose entry has `ensembles`).
void check_ensemble(const ModelEntry& entry, int members);

/// entry.build(config, runtime) when members is 1, else an ensemble of `members` builds of it
/// (text classifiers and span taggers only: another kind throws std::invalid_argument).
torch::jit::Module build_model(const ModelEntry& entry, const nlohmann::json& config, int members, nn::Runtime runtime);

/// The members of `model`: its member0, member1, ... when it is an ensemble, else `model` itself.
std::vector<torch::jit::Module> ensemble_members(const torch::jit::Module& model);

/// The tensor of `model` whose values end its logits, one per label or class: an ensemble's
/// ensemble_bias, else the entry's output_bias (undefined when the entry has none).
torch::Tensor output_bias(const ModelEntry& entry, const torch::jit::Module& model);

/// A saved model's member count: its config.json's training.ensemble (1 when absent); a value
/// that is not a whole number in [1, 64] throws std::runtime_error.
int ensemble_size(const nlohmann::json& run_config);

}  // namespace attn::models
