#include "word_vectors.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <unordered_set>

#include "attn/data/embeddings.h"
#include "attn/data/skipgram.h"
#include "attn/models/ensemble.h"
#include "attn/models/saved_model.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

/// Copies `vectors` (and with subwords the n-gram rows and the words' own rows of `subwords`) into
/// the word embedding of `model` (of each member of an ensemble; words without one keep their
/// initial values); returns what they covered, for config.json (`source` names where they came
/// from in errors).
nlohmann::json fill_word_vectors(torch::jit::Module& model, const std::vector<tasks::VocabularyWord>& words, const std::string& table_name,
                                 const data::WordVectors& vectors, const data::SubwordRows* subwords, const std::string& source) {
  std::int64_t found = 0, tokens = 0, tokens_found = 0;
  for (const torch::jit::Module& m : models::ensemble_members(model)) {
    torch::Tensor table = m.attr(table_name).toTensor();
    if (vectors.dim != table.size(1))
      throw std::runtime_error(source + ": the vectors have " + std::to_string(vectors.dim) + " dimensions, the model's embedding " +
                               std::to_string(table.size(1)) + " (--set embed_dim=" + std::to_string(vectors.dim) + " or d_model)");
    torch::NoGradGuard no_grad;
    if (subwords) {
      torch::Tensor ngrams = m.attr(models::kSubwordEmbedding).toTensor();
      if (subwords->buckets != ngrams.size(0) - 1 || subwords->dim != table.size(1))
        throw std::runtime_error(source + ".subwords: " + std::to_string(subwords->buckets) + " n-gram rows of " +
                                 std::to_string(subwords->dim) + " dimensions, the model's " + std::to_string(ngrams.size(0) - 1) + " of " +
                                 std::to_string(table.size(1)) + " (attn embed --buckets, --subword-buckets)");
      ngrams.slice(0, 1).copy_(
          torch::from_blob(const_cast<float*>(subwords->ngrams.data()), {subwords->buckets, subwords->dim}, torch::kFloat32));
    }
    found = tokens = tokens_found = 0;
    for (const auto& w : words) {
      tokens += w.count;
      const auto it = vectors.vectors.find(w.word);
      if (it == vectors.vectors.end() || w.id >= table.size(0)) continue;
      const std::vector<float>* v = &it->second;  // the word's vector, or with subwords its own row
      if (subwords)
        if (const auto own = subwords->words.find(w.word); own != subwords->words.end()) v = &own->second;
      table[w.id].copy_(torch::tensor(*v, torch::kFloat32));
      ++found;
      tokens_found += w.count;
    }
  }
  return {{"words", words.size()}, {"words_found", found},         {"found_as_other_case", vectors.lowercase_matches},
          {"tokens", tokens},      {"tokens_found", tokens_found}, {"subword_rows", subwords != nullptr}};
}

std::unordered_set<std::string> words_of(const std::vector<tasks::VocabularyWord>& words) {
  std::unordered_set<std::string> wanted;
  for (const auto& w : words) wanted.insert(w.word);
  return wanted;
}

std::vector<tasks::VocabularyWord> vocabulary_of(const models::ModelEntry& entry, const tasks::Dataset& data, const char* flag) {
  if (entry.word_embedding.empty()) throw std::invalid_argument(std::string(flag) + ": " + entry.name + " has no word embedding");
  std::vector<tasks::VocabularyWord> words = data.vocabulary();
  if (words.empty()) throw std::invalid_argument(std::string(flag) + " is for text models (their data has a vocabulary)");
  return words;
}

/// Starts the word embedding from the vectors in `file` (--embeddings).
}  // namespace

nlohmann::json load_word_vectors(torch::jit::Module& model, const models::ModelEntry& entry, const tasks::Dataset& data,
                                 const std::string& file) {
  const std::vector<tasks::VocabularyWord> words = vocabulary_of(entry, data, "--embeddings");
  const std::unordered_set<std::string> wanted = words_of(words);
  const data::WordVectors vectors = data::read_word_vectors(file, wanted);
  // A model with subwords starts from `attn embed`'s own rows and n-gram rows when the file has them
  // beside it (FILE.subwords): its lookup then gives the vectors of FILE.
  std::optional<data::SubwordRows> subwords;
  if (models::ensemble_members(model).front().hasattr(models::kSubwordEmbedding) && fs::exists(file + ".subwords"))
    subwords = data::read_subword_rows(file + ".subwords", wanted);
  nlohmann::json covered = fill_word_vectors(model, words, entry.word_embedding, vectors, subwords ? &*subwords : nullptr, file);
  covered["file"] = fs::absolute(file).string();
  return covered;
}

/// Starts the word embedding (and a model's n-gram rows) from skip-gram on `texts` (--pretrain-epochs):
/// the model's sizes, its n-gram hash, one thread, the run's seed.
nlohmann::json pretrain_word_vectors(torch::jit::Module& model, const models::ModelEntry& entry, const tasks::Dataset& data,
                                     const std::vector<std::string>& texts, const TrainOptions& t) {
  const std::vector<tasks::VocabularyWord> words = vocabulary_of(entry, data, "--pretrain-epochs");
  if (texts.empty()) throw std::invalid_argument("--pretrain-epochs learns from the texts of a --csv; this data has none (--data?)");
  std::int64_t tokens = 0;
  for (const auto& w : words) tokens += w.count;
  data::SkipgramOptions o;
  const torch::jit::Module first = models::ensemble_members(model).front();  // (an ensemble's members start from the same vectors)
  o.dim = first.attr(entry.word_embedding).toTensor().size(1);
  o.buckets = first.hasattr(models::kSubwordEmbedding) ? first.attr(models::kSubwordEmbedding).toTensor().size(0) - 1 : 0;
  o.skeletons = first.hasattr("subword_skeletons") && first.attr("subword_skeletons").toBool();
  o.epochs = pretrain_passes(t, tokens);
  o.min_count = 2;  // a corpus of one file: a word seen twice already has contexts to learn from
  o.seed = t.seed + 1;
  o.threads = 1;
  const auto t0 = std::chrono::steady_clock::now();
  const data::SkipgramVectors learnt = data::train_skipgram(texts, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::unordered_set<std::string> wanted = words_of(words);
  const data::SubwordRows subwords = data::subword_rows_of(learnt, wanted);
  nlohmann::json covered = fill_word_vectors(model, words, entry.word_embedding, data::word_vectors_of(learnt, wanted),
                                             o.buckets > 0 ? &subwords : nullptr, "--pretrain-epochs");
  covered["pretrained"] = {{"texts", texts.size()},    {"words", learnt.tokens}, {"epochs", o.epochs},
                           {"min_count", o.min_count}, {"loss", learnt.loss},    {"seconds", std::round(seconds * 10) / 10}};
  return covered;
}

std::string word_vectors_line(const nlohmann::json& e, bool frozen) {
  char line[512];
  std::string source;
  if (e.contains("pretrained")) {
    const auto& p = e.at("pretrained");
    char took[160];
    std::snprintf(took, sizeof took, "skip-gram on the training file's %lld texts (%lld words, %d passes, %.1f s)",
                  p.at("texts").get<long long>(), p.at("words").get<long long>(), p.at("epochs").get<int>(), p.at("seconds").get<double>());
    source = took;
  } else {
    source = e.at("file").get<std::string>();
  }
  std::snprintf(line, sizeof line, "embeddings: %lld of %lld words (%.1f%% of the training tokens) from %s%s\n",
                e.at("words_found").get<long long>(), e.at("words").get<long long>(),
                100.0 * e.at("tokens_found").get<double>() / std::max(1.0, e.at("tokens").get<double>()), source.c_str(),
                frozen ? ", frozen" : "");
  return line;
}

}  // namespace attn::train
