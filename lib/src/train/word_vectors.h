#pragma once
// A new run's word embedding started from word vectors (TrainOptions::embeddings, --embeddings) or
// from skip-gram on the training file's own texts (--pretrain-epochs), for the model entry's word
// embedding (and a model's subword n-gram rows). Internal to train/ (run.cpp).
#include <string>
#include <vector>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/models/registry.h"
#include "attn/tasks/task.h"
#include "attn/train/options.h"

namespace attn::train {

/// Starts the word embedding from the vectors in `file` (and FILE.subwords beside it for a model with
/// subwords); what they covered, for config.json's "embeddings".
nlohmann::json load_word_vectors(torch::jit::Module& model, const models::ModelEntry& entry, const tasks::Dataset& data,
                                 const std::string& file);

/// Starts the word embedding (and a model's n-gram rows) from skip-gram on `texts`: the model's
/// sizes, its n-gram hash, one thread, the run's seed; what they covered, with "pretrained".
nlohmann::json pretrain_word_vectors(torch::jit::Module& model, const models::ModelEntry& entry, const tasks::Dataset& data,
                                     const std::vector<std::string>& texts, const TrainOptions& t);

/// The line the run's summary gives them: "embeddings: N of M words (P% of the training tokens) from ...".
std::string word_vectors_line(const nlohmann::json& covered, bool frozen);

}  // namespace attn::train
