#pragma once
/// The model registry: one explicit list (models() in registry.cpp) of every model attn can build.
/// An entry says what kind of model it is (kinds.h), its configuration keys with defaults, the
/// training recipe of the seed it comes from, how it builds, how its config fits a data set, and
/// its layer table. A model's keys are spelled in its own file only. Apps build and rebuild models
/// through the registry; a model's name and full configuration travel inside every saved model.
/// (`--set` parsing is in overrides.h; the helpers the model files share in lib/src/models.)
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/models/kinds.h"
#include "attn/nn/script_module.h"

namespace attn::models {

struct ConfigKey {
  std::string name;
  nlohmann::json default_value;
  std::string doc;
  /// Set from the data (ModelEntry::fit) unless the user sets it: what --dump-config lists.
  bool from_data = false;
};

/// What a data set fixes in a model (0: the data has no such size).
/// The parameter of a text model's character n-gram rows, when it reads subwords
/// (models/subword_embedding.cpp: row 0 unused, then one row per hash bucket).
inline constexpr const char* kSubwordEmbedding = "subword_embedding";

struct DataSizes {
  std::int64_t vocabulary = 0;         ///< input ids are below this (embedding rows)
  std::int64_t labels = 0;             ///< outputs of a classifier
  std::int64_t features = 0;           ///< inputs of a feature classifier
  std::int64_t target_vocabulary = 0;  ///< seq2seq: output ids are below this (padding, characters, end, start)
  std::int64_t input_length = 0;       ///< the longest input, in tokens or characters
  std::int64_t output_length = 0;      ///< seq2seq: the longest target, in characters
  bool one_class_per_row = false;      ///< a classifier's outputs are classes (softmax), not 0/1 labels (sigmoids)
  std::int64_t subword_buckets = 0;    ///< text: n-gram rows the ids carry (text/subwords.h), 0 for words only
  bool subword_skeletons = false;      ///< text: a word's n-gram rows include its consonant skeleton's
};

/// A row of `attn summary`'s Keras-like table. `parameters` is the dotted prefix of the layer's
/// parameters ("lstm" holds lstm.*; empty: none); every parameter belongs to exactly one row.
struct LayerRow {
  std::string name, type, output_shape, parameters;
};

struct ModelEntry {
  std::string name;
  ModelKind kind;
  std::string description;
  std::vector<ConfigKey> keys;
  /// The training recipe the model gets when `attn train` is given no training flags (the seed's),
  /// by config.json's training keys (train/options.h: its table checks them), e.g. {"epochs": 3}.
  nlohmann::json training;
  /// Builds a fresh (randomly initialised) TorchScript model from a complete configuration, with
  /// PyTorch's operators only or with attn's kernels (nn::Runtime); bad values throw
  /// std::invalid_argument naming the key.
  std::function<torch::jit::Module(const nlohmann::json& config, nn::Runtime runtime)> build;
  /// Fits `config` (resolved) to the data: sets the keys the data fixes unless `given` (what the user
  /// set) names them (lib/src/models/model_support.h: fit_exact, fit_at_least).
  std::function<void(nlohmann::json& config, const nlohmann::json& given, const DataSizes& data)> fit;
  /// The layer table of a model with this configuration.
  std::function<std::vector<LayerRow>(const nlohmann::json& config)> layers;
  /// The parameter holding the input word vectors, one row per word id (what --embeddings fills);
  /// empty when the model has none.
  std::string word_embedding = "";
  /// The revision of what the model computes, saved in every model.pt (config.json's
  /// "model_revision"). attn runs a saved model on its native build (nn::Runtime::kNative, the
  /// file's weights) only when the file's revision is the registry's; any other file runs as
  /// saved. Bump it whenever the model's TorchScript computes something else.
  int revision = 1;
  /// Text classifiers: the model reads documents as sentences of words, its ids carrying each word's
  /// sentence (text/sentences.h), rather than one flat sequence of words.
  bool reads_sentences = false;
  /// Classifiers: the bias of the layer whose outputs are the logits (one per label or class), which
  /// post-hoc logit adjustment moves (train/options.h: logit_adjustment); empty when none.
  std::string output_bias = "";
  /// Text classifiers that `attn train --ensemble N` can combine, N of them, into one TorchScript
  /// module (models/ensemble.h).
  bool ensembles = false;
};

/// Every registered model, in a fixed order.
const std::vector<ModelEntry>& models();
/// The entry called `name`; throws std::invalid_argument listing the valid names.
const ModelEntry& find_model(const std::string& name);
/// Defaults of `entry`, then `overrides` on top. Unknown keys and values of the wrong JSON type
/// throw std::invalid_argument naming the key.
nlohmann::json resolve_config(const ModelEntry& entry, const nlohmann::json& overrides);
/// The complete configuration of `entry` for a data set: defaults, `overrides`, then the sizes the
/// data fixes (entry.fit). A size the user set that the data contradicts throws
/// std::invalid_argument naming the key (a bad setting, like any other).
nlohmann::json fit_config(const ModelEntry& entry, const nlohmann::json& overrides, const DataSizes& data);

/// A layer table with the parameter count of each row.
struct LayerCount {
  LayerRow row;
  std::int64_t count = 0;
};
struct LayerTable {
  std::vector<LayerCount> rows;
  std::int64_t total = 0;               ///< every parameter of the module
  std::vector<std::string> unassigned;  ///< parameters in no row
  std::vector<std::string> ambiguous;   ///< parameters in more than one row
};
LayerTable layer_table(const ModelEntry& entry, const torch::jit::Module& module, const nlohmann::json& config);

}  // namespace attn::models
