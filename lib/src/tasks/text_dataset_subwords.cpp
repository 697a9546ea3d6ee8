// Text classifiers' data with subwords: the vocabulary of a model with subwords, the rows read again
// as its ids (misspelt on purpose with --misspell), and the new words a data directory keeps (see
// text_dataset.h).
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include "attn/io/atomic_file.h"
#include "attn/text/perturb.h"
#include "task_support.h"
#include "text_dataset.h"

namespace attn::tasks {

namespace fs = std::filesystem;

std::shared_ptr<text::SubwordVocabulary> subwords_of(const std::shared_ptr<const text::Tokenizer>& tok, const TextDataConfig& config) {
  if (config.subword_buckets == 0) return nullptr;
  return std::make_shared<text::SubwordVocabulary>(tok, config.subword_buckets, config.subword_skeletons);
}

void read_subwords(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                   std::shared_ptr<text::SubwordVocabulary> subwords, const TrainedModel::TextRewrite& rewrite) {
  std::vector<std::string> texts = texts_again(prepared, csv, columns, rewrite);
  const std::vector<text::Sequence> rows = subwords->encode(texts);
  texts = {};
  const std::int64_t kept_before = std::accumulate(prepared.data.x.lengths.begin(), prepared.data.x.lengths.end(), std::int64_t{0});
  prepared.data.x = text::pad_sequences(rows, prepared.pad);
  prepared.data.x.subwords = subwords;
  prepared.sequences = {};
  const std::int64_t kept = std::accumulate(prepared.data.x.lengths.begin(), prepared.data.x.lengths.end(), std::int64_t{0});
  prepared.report["subwords"] = {{"buckets", subwords->buckets()},
                                 {"min_n", text::kSubwordMinN},
                                 {"max_n", text::kSubwordMaxN},
                                 {"tokens_kept", kept},
                                 {"tokens_kept_by_words_alone", kept_before},
                                 {"new_words", subwords->new_words()}};
}

TrainedModel::TextRewrite misspelling(double rate, const std::vector<text::Perturbation>& edits, MisspellCounts* counts) {
  if (rate == 0) return nullptr;
  return [rate, edits, counts](const std::string& t, std::int64_t row) {
    text::PerturbedText out = text::misspell(t, edits, text::PerturbOptions{rate, 1, {}}, static_cast<std::uint64_t>(row));
    if (counts) {
      counts->texts_changed += out.changed > 0;
      counts->words_changed += out.changed;
      counts->words += out.targets;
    }
    return std::move(out.text);
  };
}

void read_misspelt_subwords(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                            std::shared_ptr<text::SubwordVocabulary> subwords, double misspell,
                            const std::vector<text::Perturbation>& edits) {
  MisspellCounts counts;
  read_subwords(prepared, csv, columns, std::move(subwords), misspelling(misspell, edits, &counts));
  if (misspell == 0) return;
  nlohmann::json names = nlohmann::json::array();
  for (const text::Perturbation p : edits) names.push_back(text::perturbation_name(p));
  prepared.report["misspelt"] = {{"rate", misspell},
                                 {"edits", names},
                                 {"words_of_4_letters", counts.words},
                                 {"words_changed", counts.words_changed},
                                 {"texts_changed", counts.texts_changed}};
}

/// A data directory's words met beyond the tokenizer (a model with subwords: new words of --val-csv,
/// words misspelt by --misspell), in the order of their ids.
constexpr const char* kSubwordWords = "subword_words.json";

/// Writes `x`'s met words into `dir` when it has any, so that reopening it reads the same rows.
void write_subword_words(const text::PaddedSequences& x, const std::string& dir) {
  if (!x.subwords || x.subwords->new_words() == 0) return;
  io::write_file_atomic(text_file_in(dir, kSubwordWords), nlohmann::json{{"words", x.subwords->met_words()}}.dump() + "\n");
}

/// The vocabulary a reopened data directory's rows were encoded with: the tokenizer's words, then
/// the met words of dir/subword_words.json, each given its id again (null for a model without subwords).
std::shared_ptr<text::SubwordVocabulary> reopen_subwords(const text::Tokenizer& tok, const TextDataConfig& config) {
  std::shared_ptr<text::SubwordVocabulary> vocabulary = subwords_of(std::make_shared<const text::Tokenizer>(tok), config);
  const std::string path = text_file_in(config.dir, kSubwordWords);
  if (!vocabulary || !fs::exists(path)) return vocabulary;
  std::vector<std::string> words;
  try {
    words = nlohmann::json::parse(io::read_file(path)).at("words").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not a list of words (\"words\"): " + e.what());
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    const text::Sequence ids = vocabulary->encode(words[i]);
    if (ids.size() != 1 || ids[0] != vocabulary->first_new_id() + static_cast<std::int32_t>(i))
      throw std::runtime_error(path + ": word " + std::to_string(i) + " ('" + words[i] + "') is not a new word of the run's tokenizer");
  }
  return vocabulary;
}

}  // namespace attn::tasks
