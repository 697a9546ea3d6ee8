#pragma once
// Text classifiers' data (tasks/text_classification.h's task): texts read from CSVs (and as a
// hierarchical model's documents of sentences), padded as the training data was, the dataset that
// training and evaluation read, and its probabilities. Internal to the tasks layer.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/script.h>

#include "attn/data/inputs.h"
#include "attn/data/prepare.h"
#include "attn/data/rationales.h"
#include "attn/io/prepared_data.h"
#include "attn/report/word_alignment.h"
#include "attn/tasks/text_classification.h"
#include "attn/text/padding.h"
#include "attn/text/perturb.h"
#include "attn/text/subwords.h"
#include "classifier.h"

namespace attn::tasks {

/// DIR/NAME: a file of a data or run directory.
std::string text_file_in(const std::string& dir, const char* name);
/// How the model's rows are padded and cut: as the training data was.
text::PadOptions pad_of(const TextDataConfig& config);
/// How the model cuts a text's tokens, for word alignment (report/word_alignment.h).
inline report::TokenLayout token_layout(const TextDataConfig& config) {
  return {config.maxlen, config.truncating, config.subword_buckets > 0, config.sentences};
}
/// Which columns of a file hold the labels the model was trained on: its 0/1 label columns, or its
/// class column with its classes.
void set_label_columns(text::TextCsvOptions& columns, const TextDataConfig& config);
/// The rows of ids the model reads for `texts`, before padding: Keras' texts_to_sequences, a
/// hierarchical model's documents of sentences (text/sentences.h), or, for a model with subwords,
/// `subwords`' ids (which it must then be given).
std::vector<text::Sequence> sequences_of(const text::Tokenizer& tok, const TextDataConfig& config, const std::vector<std::string>& texts,
                                         int threads = 1, text::SubwordVocabulary* subwords = nullptr);
/// A new vocabulary of the model's words with their subwords (the words it meets are its own), or
/// null for a model that reads words only.
std::shared_ptr<text::SubwordVocabulary> subwords_of(const std::shared_ptr<const text::Tokenizer>& tok, const TextDataConfig& config);
/// `texts` as the model reads them: sequences_of, padded as the training data was, x.subwords set
/// for a model with subwords; `sequences` (when given) gets the rows before padding.
text::PaddedSequences pad_texts(const std::shared_ptr<const text::Tokenizer>& tok, const TextDataConfig& config,
                                const std::vector<std::string>& texts, std::vector<text::Sequence>* sequences = nullptr);
/// Probabilities [rows, labels] (row-major, in the order of `rows`) of padded ids, in
/// length-bucketed batches.
std::vector<float> predict_texts(torch::jit::Module& module, const text::PaddedSequences& x, text::Side padding,
                                 const std::vector<std::int64_t>& rows, std::int64_t batch_size);

/// A CSV row's text, its 1-based data row and its id.
struct CsvText {
  std::string text;
  std::int64_t row = 0;
  std::string id;
};
/// The texts of `csv`'s `column` (with ids from `id_column` when the file has it): every row (the
/// first `limit` that `accept` takes), or the 1-based data rows `only` in that order; a row beyond
/// the file is an error naming --rows.
std::vector<CsvText> read_texts(const std::string& csv, const std::string& column, const std::vector<std::int64_t>& only,
                                const std::string& id_column = "", std::int64_t limit = -1,
                                const std::function<bool(const std::string&)>& accept = nullptr,
                                text::TableFormat format = text::TableFormat::kAuto);
/// The texts of `csv` read again (its text column, in its format; rewritten as the prepared rows
/// were), for a second pass over rows already prepared: a hierarchical model's sentences, subword
/// ids, rationales.
std::vector<std::string> texts_again(const data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                                     const TrainedModel::TextRewrite& rewrite);
/// Hierarchical models: `prepared`'s rows become the documents of sentences (text/sentences.h) of
/// `csv`'s texts (its text column, in its format), post-padded to max_sentences x max_words, the sizes of `layout` that are 0 taken
/// from the data (text::layout_from); recorded in `config` and in prepare.json's "sentences". The
/// texts are rewritten as the prepared rows were (`rewrite`, when set).
void read_sentences(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns, text::SentenceLayout layout,
                    TextDataConfig& config, int threads, const TrainedModel::TextRewrite& rewrite = nullptr);
/// Models with subwords: `prepared`'s rows become `subwords`' ids of `csv`'s texts (every token
/// kept), padded as before, x.subwords set; recorded in prepare.json's "subwords". The texts are
/// rewritten as the prepared rows were (`rewrite`, when set).
void read_subwords(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                   std::shared_ptr<text::SubwordVocabulary> subwords, const TrainedModel::TextRewrite& rewrite = nullptr);
/// --misspell's rewrite: this share of each text's words of 4+ letters edited, by one of `edits`
/// each, seeded by the row (text::misspell), counted into `counts` when given; `rate` 0: none.
struct MisspellCounts {
  std::int64_t texts_changed = 0, words_changed = 0, words = 0;
};
TrainedModel::TextRewrite misspelling(double rate, const std::vector<text::Perturbation>& edits, MisspellCounts* counts = nullptr);
/// read_subwords into `subwords` with the texts misspelt on purpose first (misspelling), recorded
/// in prepare.json's "misspelt"; `misspell` 0 reads them as they are. (text_dataset_subwords.cpp)
void read_misspelt_subwords(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                            std::shared_ptr<text::SubwordVocabulary> subwords, double misspell,
                            const std::vector<text::Perturbation>& edits);
/// Writes `x`'s words met beyond the tokenizer (a model with subwords: new words of --val-csv, words
/// misspelt by --misspell) into `dir` when it has any, so that reopening it reads the same rows.
void write_subword_words(const text::PaddedSequences& x, const std::string& dir);
/// The vocabulary a reopened data directory's rows were encoded with: the tokenizer's words, then
/// the met words write_subword_words kept, each given its id again (null for a model without subwords).
std::shared_ptr<text::SubwordVocabulary> reopen_subwords(const text::Tokenizer& tok, const TextDataConfig& config);
/// Attention trained on human rationales: per prepared row, the spans people marked, each the
/// entries of the row's ids (unpadded, in order) holding the tokens of the span's words (a span
/// none of whose words the model reads is left out); a row without a rationale: none.
using MarkedSpans = std::vector<std::vector<std::int32_t>>;
using RationaleMarks = std::vector<MarkedSpans>;
/// The attention a row's marked spans ask for: (entry, share) pairs whose shares sum to 1, each
/// marked token the same share (RationaleTarget::kWords), or each span the same share split evenly
/// among its tokens (kSpans). No marked token: none.
std::vector<std::pair<std::int32_t, float>> attention_target(const MarkedSpans& spans, RationaleTarget target);
/// --rationales: the rows of `csv` (prepared, its sentences or subword ids read) whose text is a
/// rationale's text, byte for byte, with the entries of their marked words' tokens as explain aligns
/// words (a marked word the model does not read marks nothing); recorded in prepare.json's
/// "rationales". No such row, or a rationale whose words are not the text's: an error naming `file`
/// (and its line).
RationaleMarks mark_rationales(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                               const std::vector<data::RationaleRow>& rationales, const std::string& file, TextDataConfig config);
/// rationales.json: {"rows": [[row, [[a span's entries...], ...]], ...]} for the rows with marks, and
/// read back for a data directory of `rows` rows (errors name the file). (text_dataset_rationales.cpp)
std::string marks_json(const RationaleMarks& marks);
RationaleMarks read_marks(const std::string& path, std::int64_t rows);
/// Counterfactual logit pairing (--counterfactual): the training rows (0-based) that mention an
/// identity term and their copies' texts, the term swapped for another (text::counterfactual_copy,
/// seeded by the row), as the model reads them (rewritten as their rows were).
struct CounterfactualTexts {
  std::vector<std::int64_t> rows;
  std::vector<std::string> texts;
};
/// The copies as ids: per data row the index of its copy in `x` (-1: none), and `x` padded as the
/// rows are.
struct Counterfactuals {
  std::vector<std::int64_t> copy_of_row;
  text::PaddedSequences x;
  bool empty() const { return x.rows == 0; }
};
/// The copies of `csv`'s prepared rows (read again, each copy then rewritten by `rewrite` as its
/// row was); recorded in prepare.json's "counterfactual". (text_dataset_counterfactual.cpp)
CounterfactualTexts counterfactual_texts(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                                         const std::vector<std::string>& terms, const TrainedModel::TextRewrite& rewrite);
/// The copies read as the model reads its rows (sequences_of; a model with subwords: by
/// `subwords`, which learns their new words), padded by `pad`, for a data directory of `rows` rows.
Counterfactuals encode_counterfactuals(const CounterfactualTexts& copies, std::int64_t rows, const text::Tokenizer& tok,
                                       const TextDataConfig& config, const std::shared_ptr<text::SubwordVocabulary>& subwords,
                                       const text::PadOptions& pad, int threads);
/// counterfactuals.json: {"rows": [[row, copy], ...]}, and read back for a data directory of `rows`
/// rows (errors name the file).
std::string counterfactuals_json(const CounterfactualTexts& copies);
CounterfactualTexts read_counterfactuals(const std::string& path, std::int64_t rows);
/// Identity annotations of an evaluated file, for Jigsaw 2019's bias metric (metrics/bias.h).
struct IdentityColumns {
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;  ///< per identity, per row: the annotation, NaN where empty
  std::size_t label = 0;                   ///< the label the metric scores
  std::string html;                        ///< --bias-html: where the heatmap page goes ("" = none)
  /// One class per row (--benign): the metric scores 1 - p(this class), a row positive when its
  /// class is another; unset: the probability of `label`, positive when its label is 1.
  std::optional<std::size_t> benign;
};
/// `csv`'s identity columns `names` (empty: those of the 2019 competition's scored identities the
/// file has; none: an empty result), one value per row: a number in [0, 1], or empty, "nan" or
/// "null" (not annotated). Anything else is an error naming the file, line and column.
IdentityColumns read_identities(const std::string& csv, const std::vector<std::string>& names,
                                text::TableFormat format = text::TableFormat::kAuto);
/// Bias-aware training: the prepared rows' weights in the loss from `csv` (--weight-column's
/// numbers times, with --identity-weighting, metrics/bias.h's identity weights over the identity
/// columns, the first label's positives), scaled to mean 1; recorded in prepare.json's
/// "row_weights", and the identity columns used in `config`. (text_dataset_weights.cpp)
std::vector<float> read_row_weights(data::Prepared& prepared, const std::string& csv, text::TableFormat format, TextDataConfig& config);
/// row_weights.json's weights, one per row of a data directory of `rows` rows.
std::vector<float> read_row_weights_file(const std::string& path, std::int64_t rows);
/// --aux-labels appended to the label columns `columns` reads (0/1 labels only, each once and none
/// of --labels); --identity-weighting needs 0/1 labels too.
void add_aux_labels(text::TextCsvOptions& columns, const TextDataConfig& config);
/// --rows N,M,...: positive 1-based rows.
std::vector<std::int64_t> parse_rows(const std::vector<std::string>& list);

/// What training adds to a text dataset's rows beyond their labels (each empty: none):
/// rationales' attention, row weights in the loss, counterfactual copies.
struct TrainingSignals {
  RationaleMarks marks;
  std::vector<float> row_weights;  ///< per row, mean 1
  Counterfactuals counterfactuals;
};
/// A text dataset over prepared data in memory (what `attn prepare` produced): `scored` (empty:
/// every row) marks the rows whose labels count (Kaggle's test_labels.csv -1 rows do not);
/// `thresholds` are a full evaluation's decision thresholds; `identities` a full evaluation's
/// identity columns.
std::unique_ptr<Dataset> text_dataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config = {},
                                      std::vector<bool> scored = {}, Thresholds thresholds = {}, IdentityColumns identities = {},
                                      TrainingSignals signals = {});
/// Whether a new run's inputs hold one class per row: --label-column, or --data prepared with one.
bool reads_one_class_per_row(const data::Inputs& in);
/// A new run's training data (Task::open): a CSV prepared into RUN_DIR/data, or --data's prepared directory.
std::unique_ptr<Dataset> open_text_data(const data::Inputs& in, const models::ModelEntry& model, const std::string& run_dir, int threads);
/// An existing run's training data (Task::reopen).
std::unique_ptr<Dataset> reopen_text_data(const nlohmann::json& data_config, const std::string& run_dir, int threads);
/// --val-csv's rows read as `training`'s were (Task::open_validation).
std::unique_ptr<Dataset> open_text_validation(const std::string& csv, const Dataset& training, const std::string& run_dir, int threads);

}  // namespace attn::tasks
