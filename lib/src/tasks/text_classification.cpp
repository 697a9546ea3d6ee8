// Text classification: the task and its trained models (see task.h and text_classification.h);
// its data in text_dataset.cpp, its explanations in text_explanation.cpp.
#include "attn/tasks/text_classification.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <torch/script.h>

#include "attn/data/prepare.h"
#include "attn/text/csv.h"
#include "classifier.h"
#include "task_support.h"
#include "text_dataset.h"
#include "text_explanation.h"
#include "text_training.h"

namespace attn::tasks {
namespace {

/// What a trained text classifier reads on the command line (explain, evaluate, faithfulness and
/// the analyses): each input declared once, in the table below, and read once, typed.
struct TextInputs {
  data::Given<std::string> csv;
  data::Given<std::string> text_column, id_column;  ///< (default: the training run's)
  data::Given<std::vector<std::string>> rows;       ///< as given (parse_rows checks them where they are used)
  data::Given<std::string> labels_csv;
  data::Given<std::string> thresholds;               ///< (read by Thresholds; here: whether given)
  data::Given<std::vector<std::string>> identities;  ///< the bias metric's (evaluate)
  data::Given<std::string> bias_label, bias_html;
  data::Given<std::string> benign;  ///< one class per row: the bias metric's toxicity is 1 - p(benign)

  static TextInputs read(const data::Inputs& in, const TextDataConfig& config);
};

// (the table reads best as written)
// clang-format off
const std::vector<data::Field<TextInputs>>& text_input_fields() {
  using TI = TextInputs;
  using SpecKind = data::InputSpec::Kind;
  static const std::vector<data::Field<TI>> table = {
      {explain_csv_input(), &TI::csv},
      {{"text-column", "Text models: the column holding the text (default: the training run's)", ""}, &TI::text_column},
      {{"id-column", "Text models: the column holding row ids (default: the training run's)", ""}, &TI::id_column},
      {explain_rows_input(), &TI::rows},
      {{"labels-csv", "Text models: labels by id, Kaggle's test_labels.csv layout (-1 = not scored)", ""}, &TI::labels_csv},
      {thresholds_input(), &TI::thresholds},
      {{"identities",
        "Text models: identity columns (a number in [0, 1] per row, empty: not annotated) for Jigsaw 2019's bias metric "
        "(default: those of its 9 scored identities the file has)",
        "", SpecKind::kValue, "Identity bias"}, &TI::identities},
      {{"bias-label", "Text models: the label the bias metric scores (default: the model's first)", "", SpecKind::kValue, "Identity bias"},
       &TI::bias_label},
      {{"bias-html", "Text models: draw the bias metric's identity x metric heatmap here (HTML)", "", SpecKind::kValue, "Identity bias"},
       &TI::bias_html},
      {{"benign", "One class per row: the bias metric scores 1 - p(this class) (e.g. normal), a row toxic when its class is another",
        "", SpecKind::kValue, "Identity bias"}, &TI::benign},
  };
  return table;
}
// clang-format on

TextInputs TextInputs::read(const data::Inputs& in, const TextDataConfig& config) {
  TextInputs defaults;
  defaults.text_column.value = config.text_column;
  defaults.id_column.value = config.id_column;
  return data::read_fields(in, text_input_fields(), defaults);
}

/// The input of the table named `name`, as `command` declares it.
data::InputSpec text_input_spec(const std::string& name, Command command) {
  for (const data::Field<TextInputs>& f : text_input_fields()) {
    if (f.spec.name != name) continue;
    data::InputSpec spec = f.spec;
    if (name == "id-column" && command == Command::kFaithfulness)
      spec.help = "Text models: the column holding row ids, for --per-row (default: the training run's)";
    return spec;
  }
  throw std::logic_error("text_input_spec: " + name);
}

/// A CSV's texts as faithfulness measures them: the first `rows` data rows whose text keeps at
/// least two tokens (after the tokenizer and maxlen), their tokens the units, a removed token
/// masked like padding (the rows' real ids, less the removed, padded as the training data was).
class TextErasures : public Erasures {
 public:
  TextErasures(torch::jit::Module module, const TextDataConfig& config, const std::shared_ptr<const text::Tokenizer>& tokenizer,
               const std::string& csv, const std::string& text_column, const std::string& id_column, std::int64_t rows)
      : module_(std::move(module)), config_(config) {
    const auto maxlen = static_cast<std::size_t>(std::max<std::int64_t>(1, config.maxlen));
    const auto subwords = subwords_of(tokenizer, config);  // (a count of tokens: the words it meets do not matter)
    const auto keeps_two = [&](const std::string& t) {
      return std::min(sequences_of(*tokenizer, config, {t}, 1, subwords.get()).front().size(), maxlen) >= 2;
    };
    texts_ = read_texts(csv, text_column, {}, id_column, rows, keeps_two);
    if (static_cast<std::int64_t>(texts_.size()) < rows)
      throw std::invalid_argument("--rows " + std::to_string(rows) + ": " + csv + " has only " + std::to_string(texts_.size()) +
                                  " rows whose text keeps at least 2 tokens");
    std::vector<std::string> all;
    for (const CsvText& t : texts_) all.push_back(t.text);
    x_ = pad_texts(tokenizer, config, all);
  }

  std::vector<std::string> labels() const override { return config_.labels; }
  std::int64_t size() const override { return static_cast<std::int64_t>(texts_.size()); }

  std::vector<AttributedRow> attribute(std::int64_t first, std::int64_t count, const std::vector<models::Method>& methods,
                                       int steps) override {
    ExplainOptions options;
    options.methods = methods;
    options.steps = steps;
    std::vector<std::int64_t> rows(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) rows[static_cast<std::size_t>(i)] = first + i;
    std::vector<report::TextExplanation> explained = explain_rows(module_, config_, x_, rows, options, kScoringBatchSize);
    std::vector<AttributedRow> out;
    for (std::size_t i = 0; i < explained.size(); ++i) {
      report::TextExplanation& e = explained[i];
      const CsvText& t = texts_[static_cast<std::size_t>(first) + i];
      AttributedRow r{t.row, t.id, static_cast<std::int64_t>(e.ids.size()), e.probabilities, {}};
      for (report::Importance& m : e.importance) r.scores.push_back(std::move(m.scores));
      ids_[first + static_cast<std::int64_t>(i)].assign(e.ids.begin(), e.ids.end());
      out.push_back(std::move(r));
    }
    return out;
  }

  std::vector<float> score(const std::vector<models::Version>& versions) override {
    std::vector<const text::Sequence*> rows(texts_.size(), nullptr);
    for (const auto& [row, ids] : ids_) rows[static_cast<std::size_t>(row)] = &ids;
    for (const models::Version& v : versions)
      if (!rows.at(static_cast<std::size_t>(v.row))) throw std::logic_error("faithfulness: a version of a row not yet attributed");
    return score_text_versions(module_, config_, rows, versions, x_.subwords);
  }

 private:
  torch::jit::Module module_;
  TextDataConfig config_;
  std::vector<CsvText> texts_;
  text::PaddedSequences x_;
  std::unordered_map<std::int64_t, text::Sequence> ids_;  ///< the real ids of the rows attributed so far
};

/// The model's tokenizer, reading texts as the model was trained to (--deobfuscate).
text::Tokenizer model_tokenizer(const models::SavedModel& model, const TextDataConfig& config) {
  text::Tokenizer tok = embedded_tokenizer(model, "tokenizer.json");
  tok.read_deobfuscated(config.deobfuscate);
  return tok;
}

class TextModel : public TrainedModel, public TextClassifierModel {
 public:
  explicit TextModel(models::SavedModel saved)
      : TrainedModel(std::move(saved)),
        config_(parse_data_config<TextDataConfig>(model_.config.at("data"), model_.path)),
        tokenizer_(std::make_shared<const text::Tokenizer>(model_tokenizer(model_, config_))) {
    if (config_.labels.empty() || config_.maxlen < 1)
      throw std::runtime_error(model_.path + ": embedded config.json: keys 'data.labels' and 'data.maxlen' are required");
  }

  std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs& options,
                                 const std::function<std::vector<std::string>()>& stdin_lines) const override {
    const TextInputs in = TextInputs::read(options, config_);
    if (!in.csv.given) {
      if (!in.rows.value.empty() || in.text_column.given) throw std::invalid_argument("--rows and --text-column need --csv");
      return text_inputs(arguments, stdin_lines);
    }
    if (!arguments.empty()) throw std::invalid_argument("give texts either as arguments or with --csv, not both");
    std::vector<Input> inputs;
    for (const CsvText& t : read_texts(in.csv.value, in.text_column.value, parse_rows(in.rows.value))) inputs.push_back({t.text, {}});
    return inputs;
  }

  std::int64_t targets() const override { return static_cast<std::int64_t>(config_.labels.size()); }

  std::vector<std::int64_t> units(const std::vector<Input>& inputs) const override {  // the words read, cut to maxlen as in training
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    return pad_texts(tokenizer_, config_, texts).lengths;
  }
  std::int64_t most_units() const override { return std::max<std::int64_t>(1, config_.maxlen); }

  std::vector<models::Method> methods() const override {
    models::TextClassifier model(model_.module);
    return models::available_methods({model.has_embedded(), model.has_self_attention()});
  }

  std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size, const ExplainOptions& options) override {
    return std::make_unique<ExplanationList<report::TextExplanation>>(text_explanations(inputs, batch_size, options));
  }

  std::vector<report::TextExplanation> text_explanations(const std::vector<Input>& inputs, std::int64_t batch_size,
                                                         const ExplainOptions& options) override {
    models::TextClassifier model(module());
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    return explain_texts(model, tokenizer_, config_, texts, batch_size, options);
  }

  std::vector<float> text_probabilities(const std::vector<std::string>& texts, std::int64_t batch_size) override {
    const text::PaddedSequences x = pad_texts(tokenizer_, config_, texts);
    return predict_texts(module(), x, config_.padding, all_rows(x.rows), batch_size);
  }

  TextClassifierModel* text_classifier() override { return this; }

  ModelFacts facts() const override { return {ModelFacts::Input::kTexts, config_.labels, config_.one_class_per_row()}; }

  std::unique_ptr<Erasures> erasures(const std::string& csv, const data::Inputs& options, std::int64_t rows, int) override {
    const TextInputs in = TextInputs::read(options, config_);
    return std::make_unique<TextErasures>(module(), config_, tokenizer_, csv, in.text_column.value, in.id_column.value, rows);
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["task"] = text_classification().name();
    j["input"] = "texts";
    j["labels"] = config_.labels;
    if (config_.one_class_per_row()) j["one_class_per_row"] = true;  // the labels are classes, their probabilities sum to 1
    if (config_.subword_buckets > 0) j["subword_buckets"] = config_.subword_buckets;  // ids [B, T, 1 + G]: model.subword_ids
    if (config_.subword_skeletons) j["subword_skeletons"] = true;                     // model.subword_ids adds the skeletons' n-grams
    if (config_.deobfuscate) j["deobfuscate"] = true;  // texts go through attn's normaliser before the tokenizer
    j["maxlen"] = config_.maxlen;
    j["self_attention"] = models::TextClassifier(model_.module).has_self_attention();
    if (config_.sentences.enabled())
      j["sentences"] = {{"max_sentences", config_.sentences.max_sentences}, {"max_words", config_.sentences.max_words}};
    return j;
  }

  std::vector<std::string> examples() const override { return config_.examples; }  // none in models saved before attn 0.3

  void check(const std::vector<Input>& inputs) const override { check_texts(inputs); }

  std::vector<nlohmann::ordered_json> predict(const std::vector<Input>& inputs, std::int64_t batch_size) override {
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    const std::vector<float> probs = text_probabilities(texts, batch_size);
    std::vector<nlohmann::ordered_json> out;
    const std::size_t L = config_.labels.size();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      nlohmann::ordered_json p = nlohmann::ordered_json::object();
      for (std::size_t k = 0; k < L; ++k) p[config_.labels[k]] = probs[i * L + k];
      nlohmann::ordered_json one = {{"probabilities", p}};
      if (config_.one_class_per_row())  // the decision: the most probable class
        one["class"] = config_.labels[static_cast<std::size_t>(std::max_element(probs.begin() + i * L, probs.begin() + (i + 1) * L) -
                                                               (probs.begin() + i * L))];
      out.push_back(std::move(one));
    }
    return out;
  }

  std::unique_ptr<Dataset> open_csv(const std::string& csv, const data::Inputs& options, int threads) const override {
    return open_rewritten_csv(csv, options, threads, nullptr);
  }

  std::unique_ptr<Dataset> open_rewritten_csv(const std::string& csv, const data::Inputs& options, int threads,
                                              const TextRewrite& rewrite) const override {
    const TextInputs in = TextInputs::read(options, config_);
    if (config_.one_class_per_row() && in.thresholds.given)
      throw std::invalid_argument("--thresholds: a model with one class per row decides by the most probable class");
    if (config_.one_class_per_row() && in.labels_csv.given)
      throw std::invalid_argument("--labels-csv reads 0/1 label columns; this model reads one class per row (" + config_.label_column +
                                  ")");
    const Thresholds thresholds(options, config_.scored_labels());  // checked before the work
    data::PrepareOptions o;
    o.csv = csv;
    o.columns.text_column = in.text_column.value;
    o.columns.id_column = in.id_column.value;
    o.columns.id_required = in.id_column.given || in.labels_csv.given;
    set_label_columns(o.columns, config_);
    o.columns.labels_optional = true;
    o.columns.rewrite = rewrite;
    o.apply_loaded_tokenizer = tokenizer_.get();
    o.pad.maxlen = config_.maxlen;  // tokenised and padded exactly as the training data was
    o.pad.padding = config_.padding;
    o.pad.truncating = config_.truncating;
    o.threads = threads;
    data::Prepared prepared = data::prepare_csv(o);
    TextDataConfig config = config_;
    if (config.sentences.enabled()) read_sentences(prepared, csv, o.columns, config_.sentences, config, threads, rewrite);
    if (config.subword_buckets > 0) read_subwords(prepared, csv, o.columns, subwords_of(tokenizer_, config), rewrite);
    config.dir.clear();
    config.text_column = o.columns.text_column;
    config.id_column = o.columns.id_column;
    std::vector<bool> scored;
    if (in.labels_csv.given) scored = join_kaggle_labels(prepared.data, in.labels_csv.value, csv);
    return text_dataset(std::move(prepared.data), *tokenizer_, std::move(config), std::move(scored), thresholds, identities(csv, in));
  }

 private:
  /// The identity columns of `csv` for the bias metric (--identities, --bias-label, --bias-html).
  IdentityColumns identities(const std::string& csv, const TextInputs& in) const {
    IdentityColumns id = read_identities(csv, in.identities.given ? in.identities.value : std::vector<std::string>());
    if (in.identities.given && id.names.empty()) throw std::invalid_argument("--identities: no column named");
    if (id.names.empty()) {
      for (const auto& [flag, name] : {std::pair{&in.bias_label, "--bias-label"}, {&in.bias_html, "--bias-html"}, {&in.benign, "--benign"}})
        if (flag->given) throw std::invalid_argument(std::string(name) + ": " + csv + " has no identity column (--identities names them)");
      return id;
    }
    if (in.bias_label.given) {
      const auto it = std::find(config_.labels.begin(), config_.labels.end(), in.bias_label.value);
      if (it == config_.labels.end())
        throw std::invalid_argument("--bias-label: '" + in.bias_label.value + "' is not one of this model's labels");
      id.label = static_cast<std::size_t>(it - config_.labels.begin());
    }
    if (in.benign.given) id.benign = benign_class(in);
    if (in.bias_html.given) id.html = in.bias_html.value;
    return id;
  }

  /// --benign's class (one class per row; not with --bias-label): its index among the classes.
  std::size_t benign_class(const TextInputs& in) const {
    if (!config_.one_class_per_row())
      throw std::invalid_argument("--benign is for a model with one class per row; this one has 0/1 labels (--bias-label picks one)");
    if (in.bias_label.given) throw std::invalid_argument("give one of --benign and --bias-label");
    const auto it = std::find(config_.labels.begin(), config_.labels.end(), in.benign.value);
    if (it == config_.labels.end()) {
      std::string classes;
      for (const std::string& c : config_.labels) classes += (classes.empty() ? "" : ", ") + c;
      throw std::invalid_argument("--benign: '" + in.benign.value + "' is not one of this model's classes (" + classes + ")");
    }
    return static_cast<std::size_t>(it - config_.labels.begin());
  }

  /// Labels by id from Kaggle's test_labels.csv layout (-1: not scored); returns which rows are scored.
  std::vector<bool> join_kaggle_labels(io::PreparedData& data, const std::string& labels_csv, const std::string& csv) const {
    const std::size_t L = config_.labels.size();
    const text::LabelTable t = text::read_label_csv(labels_csv, config_.labels, config_.id_column);
    std::unordered_map<std::string, std::size_t> row_of;
    for (std::size_t i = 0; i < t.ids.size(); ++i) row_of[t.ids[i]] = i;
    data.label_names = config_.labels;
    data.labels.assign(data.ids.size() * L, 0.0f);
    std::vector<bool> scored(data.ids.size(), false);
    for (std::size_t i = 0; i < data.ids.size(); ++i) {
      const auto it = row_of.find(data.ids[i]);
      if (it == row_of.end()) throw std::runtime_error(labels_csv + ": no labels for id '" + data.ids[i] + "' of " + csv);
      std::copy(t.labels.begin() + static_cast<std::ptrdiff_t>(it->second * L),
                t.labels.begin() + static_cast<std::ptrdiff_t>((it->second + 1) * L),
                data.labels.begin() + static_cast<std::ptrdiff_t>(i * L));
      scored[i] = t.scored[it->second];
    }
    return scored;
  }

  TextDataConfig config_;
  std::shared_ptr<const text::Tokenizer> tokenizer_;  // shared with the vocabularies of a model with subwords
};

class TextClassification : public Task {
 public:
  const char* name() const override { return "text-classification"; }

  ForCommand for_command(Command command) const override {
    // The texts of a file, read as explain reads them (explain, aggregate, audit).
    const auto texts = [&] {
      return std::vector<data::InputSpec>{text_input_spec("csv", command), text_input_spec("text-column", command),
                                          text_input_spec("rows", command)};
    };
    switch (command) {
      case Command::kTrain:
        return {
            "a CSV's (TSV's, JSON Lines') text column (--text-column) tokenised as Keras does, 0/1 label columns (--labels) "
            "or one class per row (--label-column)",
            training_inputs()};
      case Command::kExplain:
        return {"the label probabilities and every word's weight; texts as arguments, stdin lines or --csv", texts()};
      case Command::kEvaluate:
        return {
            "predictions in Kaggle's sample_submission layout (one class per row: and the predicted class); with labels (or "
            "--labels-csv) ROC AUC per label, loss, accuracy (one class per row: macro-F1, one-vs-one AUC, confusion)",
            {csv_input("CSV to score"), text_input_spec("text-column", command), text_input_spec("id-column", command),
             text_input_spec("labels-csv", command), text_input_spec("thresholds", command), text_input_spec("identities", command),
             text_input_spec("bias-label", command), text_input_spec("bias-html", command), text_input_spec("benign", command)}};
      case Command::kFaithfulness:
        return {"each method's top tokens removed, or kept alone (rows keeping at least 2 tokens)",
                {text_input_spec("text-column", command), text_input_spec("id-column", command)}};
      case Command::kExport:
        return {"forward(ids) -> (probabilities, attention); embeddings(ids), logits_embedded(x, ids) for gradients", {}};
      case Command::kAggregate:
        return {"the words that drive each label over a file's texts (--csv)", texts()};
      case Command::kAudit:
        return {"template sentences per identity term; with --csv, its texts with the terms swapped", texts()};
      case Command::kRobustness:  // a labelled file, read as evaluate reads it
        return {"a labelled file's metrics and decisions with its words misspelt on purpose",
                {csv_input("CSV to score"), text_input_spec("text-column", command), text_input_spec("id-column", command),
                 text_input_spec("labels-csv", command), text_input_spec("thresholds", command)}};
    }
    return {};
  }

  /// prepare's inputs, --data and --val-csv beside --csv, then the text task's own.
  static std::vector<data::InputSpec> training_inputs() {
    std::vector<data::InputSpec> specs = data::prepare_inputs();
    const std::vector<data::InputSpec> own = text_training_specs();
    specs.insert(specs.begin() + 1, own.front());
    specs.insert(specs.begin() + 2, val_csv_input());
    specs.insert(specs.end(), own.begin() + 1, own.end());
    return specs;
  }

  std::unique_ptr<Dataset> open(const data::Inputs& in, const models::ModelEntry& model, const std::string& run_dir,
                                int threads) const override {
    return open_text_data(in, model, run_dir, threads);
  }

  /// One class per row: smaller batches and early stopping on the held-out rows (the best epoch kept).
  /// The seed's recipe (3 epochs of 512 rows) was made for Jigsaw's 160,000 comments; corpora with
  /// one class per row are a tenth of that (HateXplain: 15,000 posts), where 3 epochs of 512 are
  /// 90 steps (docs/benchmarks.md).
  /// Read from the CSV, the word vectors start from skip-gram with subwords on the file's own texts
  /// (no pretrained vectors need downloading; on HateXplain +0.01 AUROC), and model.pt's output bias
  /// is adjusted for the held-out rows' macro-F1 (+0.009 macro-F1). A seed ensemble of 3 models that
  /// can be ensembled, stopped on the held-out one-vs-one AUROC (an ensemble's loss stops too early),
  /// adds 0.008 macro-F1 and 0.005 AUROC for 2-3 x the training time (docs/benchmarks.md#real-data-hatexplain).
  nlohmann::json training_recipe(const data::Inputs& in) const override {
    if (!reads_one_class_per_row(in)) return nlohmann::json::object();
    nlohmann::json recipe = {{"batch_size", 64},         {"epochs", 20},  {"early_stopping_patience", 2},
                             {"monitor", "val_ovo_auc"}, {"ensemble", 3}, {"logit_adjustment", "macro-f1"}};
    if (!in.given("data")) recipe["pretrain_epochs"] = 20;
    return recipe;
  }

  std::vector<std::string> unlabelled_texts(const data::Inputs& in) const override {
    if (in.given("data")) return {};
    const data::PrepareOptions o = data::prepare_options(in, 1);
    std::vector<std::string> texts;
    for (CsvText& t : read_texts(o.csv, o.columns.text_column, {}, "", -1, nullptr, o.columns.format)) texts.push_back(std::move(t.text));
    return texts;
  }

  std::unique_ptr<Dataset> reopen(const nlohmann::json& data_config, const std::string& run_dir, int threads) const override {
    return reopen_text_data(data_config, run_dir, threads);
  }

  std::unique_ptr<Dataset> open_validation(const std::string& csv, const Dataset& training, const std::string& run_dir,
                                           int threads) const override {
    return open_text_validation(csv, training, run_dir, threads);
  }

  std::unique_ptr<TrainedModel> use(models::SavedModel model) const override { return std::make_unique<TextModel>(std::move(model)); }
};

}  // namespace

const Task& text_classification() {
  static const TextClassification task;
  return task;
}

}  // namespace attn::tasks
