#pragma once
/// Tasks: everything attn knows about one kind of model's data, one file per task.
///
///   text classification     (text_classification.cpp) Keras-tokenised padded word ids, multi-label BCE
///   feature classification  (feature_classification.cpp) numeric rows, one 0/1 label, BCE
///   seq2seq                 (seq2seq.cpp) character ids both sides, cross-entropy with teacher forcing,
///                           greedy decoding
///   span tagging            (span_tagging.cpp) Keras-tokenised words with subwords, a 0/1 mark per
///                           token from the characters people marked, binary cross-entropy per token
///
/// A task declares the command-line inputs it reads (Command), its data config (config.json's
/// "data" block, a typed struct in its file), reads its data (a CSV, prepared data, a run's copy),
/// batches it, computes the loss, and evaluates and explains with a trained model. The table in
/// task.cpp maps a model's kind (models::ModelKind) to its task: a new task is one file and one row.
///
/// Metrics: one vocabulary for every surface (validation epochs, metrics.jsonl with "val_" in front,
/// `attn evaluate --metrics`). Every task reports
///   loss          number  the task's training loss: binary cross-entropy (classifiers), cross-entropy
///                         (one class per row), mean cross-entropy per target character (seq2seq,
///                         teacher-forced)
///   accuracy      number  binary accuracy over rows and labels (p > 0.5); one class per row: the most
///                         probable class right; seq2seq: next-character accuracy under teacher forcing
///   rows          number  rows scored;  rows_skipped  number  rows left out (Kaggle's -1 labels)
/// classifiers (text and feature) add
///   auc           object  ROC AUC per label (one class per row: one-vs-rest per class), {label: number or null}
///   mean_auc      number  mean of the defined per-label AUCs (null if none)
/// one class per row adds  macro_f1, ovo_auc  numbers  (metrics.h's ClassMetrics); evaluate adds
///   precision, recall, f1 {class: number} and confusion {class: {decided class: rows}}
/// text classifiers trained with --aux-labels add  aux_auc  object  {auxiliary label: ROC AUC}  and
///   aux_mean_auc  number  (the other metrics leave the auxiliary outputs out; the loss covers them)
/// feature classification adds  mean_attention  object  {feature: mean weight}
/// seq2seq adds  exact_match, char_accuracy  numbers  of the greedy outputs against the targets
/// span tagging: loss and accuracy per token; adds  span_f1, span_precision, span_recall  numbers,
///   SemEval-2021 Task 5's character F1 (metrics/spans.h) of the marked characters, per post, mean
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/script.h>
#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/metrics/metrics.h"
#include "attn/models/importance.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/report/explanation.h"
#include "attn/tasks/batching.h"
#include "attn/tasks/command.h"
#include "attn/text/tokenizer.h"

namespace attn::parallel {
class RowSharing;  // parallel/sharing.h
}

namespace attn::tasks {

/// One batch: the arguments of the model's `logits` method, and the targets.
struct Batch {
  std::vector<c10::IValue> inputs;
  torch::Tensor targets;
  std::int64_t tokens = 0;  ///< input positions in the batch, padding included
  /// Attention trained on human rationales: per row the attention its rationale asks for [B, T]
  /// (people's marked tokens, normalised to sum 1; a row without a rationale: all 0). Undefined
  /// when the data has none.
  torch::Tensor attention_targets;
  /// Each row's weight in the loss [B] (bias-aware training: --weight-column, --identity-weighting),
  /// scaled so that the training rows' mean is 1; undefined when the rows are unweighted.
  torch::Tensor row_weights;
  /// Counterfactual training (--counterfactual): what the model reads for the identity-swapped
  /// copies of the batch's rows that have one, and those rows' positions in the batch [copies]
  /// (int64). Undefined when the data has no copies or none of the batch's rows has one.
  torch::Tensor counterfactual_inputs, counterfactual_rows;
};

/// The training flags that weigh the loss (Dataset::loss_weights), as given ("" none).
struct LossWeights {
  std::string positive;  ///< --pos-weight: auto or w1,w2,... (0/1 labels)
  std::string classes;   ///< --class-weight: balanced or w1,w2,... (one class per row)
  double span_f1 = 0;    ///< --span-f1-loss: the weight of each text's soft F1 (span taggers)
};

struct Loss {
  torch::Tensor value;  ///< a scalar with gradients
  double accuracy = 0;  ///< of the batch, in the task's accuracy metric
};

/// A word of a model's input vocabulary: its id, and how often training saw it.
struct VocabularyWord {
  std::int64_t id = 0;
  std::string word;
  std::int64_t count = 0;
};

struct EvaluateOptions {
  /// kMetrics: the metrics only (validation); kFull: also the predictions and the pictures.
  enum class Detail { kMetrics, kFull };
  std::int64_t batch_size = kScoringBatchSize;
  Detail detail = Detail::kMetrics;
  /// Scoring by several workers (validation, a sharded `attn evaluate`): each scores its share of
  /// the rows' batches and every worker gets every row's outputs, the same bits one process gets.
  const parallel::RowSharing* sharing = nullptr;
};

struct Evaluation {
  nlohmann::ordered_json metrics;    ///< see above; {} when the rows have no labels or targets
  std::string predictions_csv;       ///< with Detail::kFull: a header, then one line per row
  std::vector<std::string> svg;      ///< with Detail::kFull: pictures (feature models: mean attention per feature)
  std::vector<float> probabilities;  ///< with Detail::kFull, text classifiers: [rows, labels] row-major, in the rows' order
  /// With Detail::kFull: files the task's own evaluate inputs asked for, (path, content), written
  /// once all is computed (text classifiers: --bias-html's page).
  std::vector<std::pair<std::string, std::string>> files;
};

/// Rows of a task's data: the model's inputs and, for training or a labelled CSV, the targets.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::int64_t rows() const = 0;
  /// Each row's length, what batches are bucketed by (all 1 for fixed-size rows).
  virtual const std::vector<std::int64_t>& lengths() const = 0;
  virtual Batch batch(const std::vector<std::int64_t>& rows, Width width) const = 0;
  /// Training loss of a batch (the model in training mode), weighed by `weights` (loss_weights) when
  /// it is defined.
  virtual Loss loss(torch::jit::Module& model, const Batch& batch, const torch::Tensor& weights = {}) const = 0;
  /// The share of a batch's loss that the batch's rows `share` carry (data-parallel workers each
  /// take a share): what the loss averages over, in `share` over in `batch`. Rows by default (a
  /// classifier's loss is a mean over rows); a seq2seq loss is a mean over target characters.
  virtual double share_of_loss(const std::vector<std::int64_t>& share, const std::vector<std::int64_t>& batch) const;
  /// The loss's weights from the training flags (`spec`), counted over `rows` where they depend on the
  /// data: 0/1 labels weigh each label's positive class (--pos-weight), one class per row each class
  /// (--class-weight); undefined when none is given. A flag the data has no use for throws
  /// std::invalid_argument naming it.
  virtual torch::Tensor loss_weights(const LossWeights& spec, const std::vector<std::int64_t>& rows) const;
  /// The numbers evaluate() reports for every validation epoch (what --monitor names with "val_").
  virtual std::vector<std::string> metric_names() const = 0;
  /// The word ids `rows` look up in the model's word-vector table (models::ModelEntry::word_embedding),
  /// any shape, every id the batch of `rows` reads; undefined when the task has none. The table is
  /// read at these ids only, so its gradient is zero in every other row (what data-parallel
  /// workers exchange rests on it).
  virtual torch::Tensor word_ids(const std::vector<std::int64_t>& rows) const {
    (void)rows;
    return {};
  }
  /// The input vocabulary (text tasks, for pretrained word vectors); empty for the others.
  virtual std::vector<VocabularyWord> vocabulary() const { return {}; }
  /// Post-hoc logit adjustment (--logit-adjustment): the offsets to `model`'s output bias that
  /// maximise the data's decision metric on `rows`. One class per row: per class, the macro-F1's
  /// (metrics.h's macro_f1_offsets); a span tagger: its one output's, the character F1's. Empty for
  /// data of another kind.
  virtual metrics::LogitAdjustment logit_offsets(torch::jit::Module& model, const std::vector<std::int64_t>& rows) const {
    (void)model, (void)rows;
    return {};
  }
  /// The post-hoc logit adjustment the data takes (--logit-adjustment's value: "macro-f1" for one
  /// class per row, "span-f1" for a span tagger's threshold), or "" for none; logit_offsets
  /// computes it.
  virtual std::string logit_adjustment() const { return ""; }
  /// Metrics (and predictions) of `rows`, in evaluation mode without gradients, in length-bucketed
  /// batches: what validation reports, and what `attn evaluate` reports for a CSV.
  virtual Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const = 0;
  /// config.json's "data" block: where the data came from and what the model needs to read more.
  virtual nlohmann::json data_config() const = 0;
  /// The model sizes the data fixes (see models::ModelEntry::fit).
  virtual models::DataSizes sizes() const = 0;
  /// Files stored in the run directory and embedded in model.pt, e.g. {"tokenizer.json": ...}.
  virtual std::map<std::string, std::string> files() const = 0;
};

/// One input to explain: a text (text classifiers, seq2seq) or a row of feature values.
struct Input {
  std::string text;
  std::vector<float> values;
};

/// What `attn explain` computes besides the attention every explanation has (models/importance.h).
struct ExplainOptions {
  std::vector<models::Method> methods;  ///< each method's scores, per label; empty: the attention only, as ever
  int steps = models::kDefaultSteps;    ///< integrated gradients' steps (Gauss-Legendre nodes)
  std::string label;                    ///< the label text and HTML show the methods for ("": the most probable)
  /// Text classifiers: compute the methods' scores for each input's shown label alone (one backward
  /// pass per point instead of one per label), that label being its entry of `row_labels` when
  /// given and not empty, else `label`, else the most probable.
  bool shown_label_only = false;
  std::vector<std::string> row_labels;  ///< per input, with shown_label_only (empty: none given)
};

/// Throws std::invalid_argument naming `flag` unless 1 <= steps <= models::kMaxSteps.
void check_steps(int steps, const std::string& flag);

/// One row with its units' scores, as a task attributes it for faithfulness.
struct AttributedRow {
  std::int64_t row = 0;  ///< 1-based data row of the file
  std::string id;        ///< the row's id ("" when the file has none)
  std::int64_t units = 0;
  std::vector<float> probabilities;  ///< p_l(x), per label
  /// Per method (in the order asked for), per label, one score per unit.
  std::vector<std::vector<std::vector<float>>> scores;
};

/// A task's rows for `attn faithfulness` (analyses/faithfulness.h): what they are, their scores,
/// and their probabilities with units removed. Version::row indexes the rows (0-based, in the order
/// attribute() gives them). The task says what a row, a unit and a removal are; the measuring is
/// the analysis's, the same for every task.
class Erasures {
 public:
  virtual ~Erasures() = default;
  /// The labels' names.
  virtual std::vector<std::string> labels() const = 0;
  /// The rows to measure.
  virtual std::int64_t size() const = 0;
  /// Rows [first, first + count) with the scores of `methods` (never random).
  virtual std::vector<AttributedRow> attribute(std::int64_t first, std::int64_t count, const std::vector<models::Method>& methods,
                                               int steps) = 0;
  /// p_l of versions of rows (Version::row: 0-based over all rows): [versions x labels] row-major.
  virtual std::vector<float> score(const std::vector<models::Version>& versions) = 0;
};

/// Explanations of several inputs, rendered on request.
class Explanations {
 public:
  virtual ~Explanations() = default;
  virtual std::size_t size() const = 0;
  /// What `attn explain --json` prints for input i (and what the server returns).
  virtual nlohmann::ordered_json json(std::size_t i) const = 0;
  /// json(i).dump(), written without building the document (a huge text's words one at a time),
  /// with or without a transformer's self-attention.
  virtual std::string json_line(std::size_t i, report::SelfAttention self_attention = report::SelfAttention::kInclude) const = 0;
  /// What `attn explain` prints for input i.
  virtual std::string text(std::size_t i) const = 0;
  /// One self-contained page of all of them.
  virtual std::string html() const = 0;
  /// Pictures (SVG); empty when the task draws none.
  virtual std::vector<std::string> svg() const = 0;
};

/// Explanations of one of report/'s shapes.
template <class E>
class ExplanationList : public Explanations {
 public:
  explicit ExplanationList(std::vector<E> items) : items_(std::move(items)) {}
  std::size_t size() const override { return items_.size(); }
  nlohmann::ordered_json json(std::size_t i) const override { return report::to_json(items_.at(i)); }
  std::string json_line(std::size_t i, report::SelfAttention self_attention = report::SelfAttention::kInclude) const override {
    return report::to_json_line(items_.at(i), self_attention);
  }
  std::string text(std::size_t i) const override { return report::to_text(items_.at(i)); }
  std::string html() const override { return report::to_html(items_); }
  std::vector<std::string> svg() const override { return report::to_svg(items_); }
  const std::vector<E>& items() const { return items_; }

 private:
  std::vector<E> items_;
};

/// What a trained model is, typed: what the analyses and the server ask of it (describe() gives
/// clients the same, and more, as JSON).
struct ModelFacts {
  enum class Input { kTexts, kRows };
  Input input = Input::kTexts;  ///< texts (text classifiers, seq2seq) or rows of numbers (feature models)
  /// Classifiers: the names of the probabilities they give, in their order (0/1 labels, or the
  /// classes of a model with one class per row); empty for a seq2seq model.
  std::vector<std::string> labels;
  bool one_class_per_row = false;  ///< the labels are classes: their probabilities sum to 1
};

/// What a text classifier gives, typed (TrainedModel::text_classifier()): what the analyses that
/// read its words and probabilities use, instead of its JSON.
class TextClassifierModel {
 public:
  virtual ~TextClassifierModel() = default;
  /// Each text's probabilities [texts x labels] row-major (ModelFacts::labels' order), in
  /// length-bucketed batches of at most `batch_size`: the numbers predict() gives.
  virtual std::vector<float> text_probabilities(const std::vector<std::string>& texts, std::int64_t batch_size) = 0;
  /// explain()'s explanations, as they are.
  virtual std::vector<report::TextExplanation> text_explanations(const std::vector<Input>& inputs, std::int64_t batch_size,
                                                                 const ExplainOptions& options) = 0;
};

/// What a span tagger gives, typed (TrainedModel::span_tagger()): what `attn spans` reads.
class SpanTaggerModel {
 public:
  virtual ~SpanTaggerModel() = default;
  /// Each text's marked characters (sorted code point offsets, SemEval's): the characters of its
  /// words whose probability is at least `threshold` (text/char_spans.h's rule), in length-bucketed
  /// batches of at most `batch_size`.
  virtual std::vector<std::vector<std::int64_t>> text_spans(const std::vector<std::string>& texts, std::int64_t batch_size,
                                                            double threshold) = 0;
};

/// A trained model with what its task needs to use it (its tokenizers, its data config).
class TrainedModel {
 public:
  explicit TrainedModel(models::SavedModel model) : model_(std::move(model)) {}
  virtual ~TrainedModel() = default;
  const models::SavedModel& saved() const { return model_; }
  torch::jit::Module& module() { return model_.module; }

  /// Inference settings among the task's explain or evaluate inputs (seq2seq: --beam); called
  /// before read_inputs, explain, predict and open_csv. Bad values throw std::invalid_argument.
  virtual void configure(const data::Inputs& options) { (void)options; }
  /// The inputs `attn explain` names: the positional `arguments` (or, when there are none,
  /// `stdin_lines()`), and the task's explain inputs (`options`, e.g. --csv --rows).
  virtual std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs& options,
                                         const std::function<std::vector<std::string>()>& stdin_lines) const = 0;
  /// The importance methods it can give besides the attention (attn explain --methods).
  virtual std::vector<models::Method> methods() const = 0;
  /// Explanations of `inputs`, run in (length-bucketed) batches of at most `batch_size`, with the
  /// scores of options.methods (each one of methods(); an unknown label throws std::invalid_argument).
  virtual std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size = 64,
                                                const ExplainOptions& options = {}) = 0;
  /// Roughly what explaining one input with `options` costs, in forward passes of one input (a
  /// forward and backward pass counts 3): 1 for the attention alone, ~3 x labels x steps for
  /// integrated gradients. What a server weighs requests by.
  std::int64_t explain_cost(const ExplainOptions& options) const;
  /// What explaining all of `inputs` with `options` costs, in units read by forward passes: each
  /// input's units() times its passes (explain_cost's, leave-one-out's for its own length). What a
  /// server caps a request at (--max-request-cost). Inputs check() would refuse may be counted anyhow.
  std::int64_t request_cost(const std::vector<Input>& inputs, const ExplainOptions& options) const;
  /// The most request_cost can be for `inputs` inputs, without reading them (every one at
  /// most_units()), or -1 when the model reads inputs of any length. Cheaper than request_cost,
  /// which tokenises: a server checks this bound first.
  std::int64_t request_cost_bound(std::size_t inputs, const ExplainOptions& options) const;
  /// The most units the model reads of one input (a text model's maxlen), or -1: no bound.
  virtual std::int64_t most_units() const { return -1; }
  /// How many units (words, features, characters) the model reads of each input (all at once: a
  /// text model tokenises them together).
  virtual std::vector<std::int64_t> units(const std::vector<Input>& inputs) const = 0;
  /// How many outputs per input the gradient methods attribute: the labels, a seq2seq model's
  /// typical output length.
  virtual std::int64_t targets() const { return 1; }
  /// The rows of `csv` as `attn faithfulness` measures them (analyses/faithfulness.h): the first
  /// `rows` of them that it can measure, read with the task's faithfulness inputs (`options`).
  /// Tasks it does not apply to throw std::invalid_argument.
  virtual std::unique_ptr<Erasures> erasures(const std::string& csv, const data::Inputs& options, std::int64_t rows, int threads);
  /// The cheap path: per input, the outputs only ({"probabilities": {label: p}}, {"probability": p},
  /// {"output": "..."}), in length-bucketed batches; the same as explain gives, whatever the batch.
  virtual std::vector<nlohmann::ordered_json> predict(const std::vector<Input>& inputs, std::int64_t batch_size) = 0;
  /// What a client needs to call it: "task", "input" ("texts" or "rows") and the task's facts
  /// (labels, features, columns, whether it has self-attention).
  virtual nlohmann::ordered_json describe() const = 0;
  /// What the model is, typed.
  virtual ModelFacts facts() const = 0;
  /// The model as a text classifier, or nullptr when it is none (feature models, seq2seq).
  virtual TextClassifierModel* text_classifier() { return nullptr; }
  /// The model as a span tagger, or nullptr when it is none.
  virtual SpanTaggerModel* span_tagger() { return nullptr; }
  /// A few inputs as a user would type them (the explain page's examples; warming a server up).
  virtual std::vector<std::string> examples() const = 0;
  /// Throws std::invalid_argument naming what is wrong with an input (a text where a row is wanted,
  /// a row of the wrong width, invalid UTF-8), before any model runs.
  virtual void check(const std::vector<Input>& inputs) const = 0;
  /// The rows of `csv` as the model reads them (its tokenizers, its training columns unless
  /// `options`, the task's evaluate inputs, say otherwise), with labels or targets when the CSV has them.
  virtual std::unique_ptr<Dataset> open_csv(const std::string& csv, const data::Inputs& options, int threads) const = 0;
  /// open_csv with each text rewritten before the model reads it: rewrite(text, its 1-based data
  /// row) (attn robustness: misspelt on purpose). Models that do not read texts throw std::invalid_argument.
  using TextRewrite = std::function<std::string(const std::string& text, std::int64_t row)>;
  virtual std::unique_ptr<Dataset> open_rewritten_csv(const std::string& csv, const data::Inputs& options, int threads,
                                                      const TextRewrite& rewrite) const;

 protected:
  models::SavedModel model_;
};

class Task {
 public:
  virtual ~Task() = default;
  /// config.json's "task", e.g. "text-classification".
  virtual const char* name() const = 0;
  /// What `command` does with the task's models and the inputs it reads for it (one case each).
  virtual ForCommand for_command(Command command) const = 0;
  /// The command-line inputs the task reads for `command` (besides the positional ones).
  std::vector<data::InputSpec> inputs(Command command) const { return for_command(command).inputs; }
  /// What `command` does with the task's models, in a line for --help (e.g. explain: "label
  /// probabilities and every word's weight").
  std::string about(Command command) const { return for_command(command).about; }
  /// A new run's training data from its inputs, read as `model` reads (e.g. as sentences);
  /// RUN_DIR/data receives what --resume will read (prepared data, or a copy of the CSV).
  virtual std::unique_ptr<Dataset> open(const data::Inputs& inputs, const models::ModelEntry& model, const std::string& run_dir,
                                        int threads) const = 0;
  /// The training recipe (config.json's training keys, e.g. {"batch_size": 64}) for data read with
  /// `inputs`, over the model's own (models::ModelEntry::training) and under the user's flags: what
  /// the task knows a kind of data trains well with. Empty by default (the model's recipe).
  virtual nlohmann::json training_recipe(const data::Inputs& inputs) const {
    (void)inputs;
    return nlohmann::json::object();
  }

  /// Throws std::invalid_argument when the loss of `model` (built from the run's config, before any
  /// data is read) cannot take the weights `spec` asks for. By default a task's loss has no soft F1
  /// (--span-f1-loss is refused); the rest is checked by Dataset::loss_weights.
  virtual void check_loss_weights(const LossWeights& spec, torch::jit::Module& model) const;
  /// The texts of the training file read with `inputs`, for word vectors learnt from them before
  /// training (--pretrain-epochs): every row's text, the held-out rows' too (no label is read).
  /// Empty when the task reads no texts, or they were prepared already (--data).
  virtual std::vector<std::string> unlabelled_texts(const data::Inputs& inputs) const {
    (void)inputs;
    return {};
  }
  /// An existing run's training data, from config.json's "data" block and the run's files.
  virtual std::unique_ptr<Dataset> reopen(const nlohmann::json& data_config, const std::string& run_dir, int threads) const = 0;
  /// Validation rows from a CSV of their own (--val-csv), read as `training` was (its tokenizers,
  /// columns, lengths); RUN_DIR/data receives what --resume will read (reopen() reads it back).
  virtual std::unique_ptr<Dataset> open_validation(const std::string& csv, const Dataset& training, const std::string& run_dir,
                                                   int threads) const = 0;
  /// A model trained on this task, ready to explain and evaluate; errors name its file.
  virtual std::unique_ptr<TrainedModel> use(models::SavedModel model) const = 0;
};

/// The task of a kind of model (the table).
const Task& task_for(models::ModelKind kind);
/// "bilstm-attention (a text-classification model)", for errors.
std::string describe_model(const models::SavedModel& model);
/// Loads model.pt (or RUN_DIR/model.pt) and hands it to its task.
std::unique_ptr<TrainedModel> open_model(const std::string& path);
/// open_model(path) for `command`, whose `inputs` its task must declare for that command (one it
/// does not declare throws std::invalid_argument naming the model): every command's first step.
std::unique_ptr<TrainedModel> open_for(const std::string& path, Command command, const data::Inputs& inputs);

/// The model `attn train` trains when --model is not given: the first of the registry whose task
/// reads every input given (bilstm-attention for a CSV of texts and labels, bilstm-tagger with
/// --spans-column). Inputs that no one task reads together throw std::invalid_argument saying which
/// task reads which.
const models::ModelEntry& model_for_training(const data::Inputs& inputs);

/// Every task with the kind of model it serves, in the table's order.
struct TaskRow {
  models::ModelKind kind;
  const Task* task;
};
std::vector<TaskRow> all_tasks();

/// The inputs of `attn explain --methods`: methods checked against what `model` gives (one it cannot
/// give throws std::invalid_argument naming `flag`), steps checked. No methods, or the attention
/// alone, is the attention only: today's output.
ExplainOptions explain_options(const TrainedModel& model, const std::vector<models::Method>& methods, int steps, const std::string& label,
                               const std::string& flag = "--methods");

}  // namespace attn::tasks
