// Text classification: everything attn knows about text classifiers' data (see task.h).
#include "attn/tasks/text_classification.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include <torch/torch.h>

#include "attn/data/prepare.h"
#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data_reader.h"
#include "attn/nn/script_module.h"
#include "attn/tasks/faithfulness.h"
#include "attn/tasks/metrics.h"
#include "attn/text/csv.h"
#include "attn/text/dataset.h"
#include "attn/text/padding.h"
#include "classifier.h"
#include "task_support.h"

namespace attn::tasks {
namespace {

namespace fs = std::filesystem;

std::string file_in(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

/// How the model's rows are padded and cut: as the training data was.
text::PadOptions pad_of(const TextDataConfig& config) {
  text::PadOptions pad;
  pad.maxlen = std::max<std::int64_t>(1, config.maxlen);
  pad.padding = config.padding;
  pad.truncating = config.truncating;
  return pad;
}

/// The rows of ids the model reads for `texts`, before padding: Keras' texts_to_sequences, or a
/// hierarchical model's documents of sentences (text/sentences.h).
std::vector<text::Sequence> sequences_of(const text::Tokenizer& tok, const TextDataConfig& config, const std::vector<std::string>& texts,
                                         int threads = 1) {
  return config.sentences.enabled() ? text::encode_documents(tok, texts, config.sentences, threads)
                                    : tok.texts_to_sequences(texts, threads);
}

void align_words(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text,
                 std::size_t all);
void align_sentences(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text);

std::vector<report::TextExplanation> explain_rows(torch::jit::Module& module, const TextDataConfig& config, const text::PaddedSequences& x,
                                                  const std::vector<std::int64_t>& rows, const ExplainOptions& options,
                                                  std::int64_t batch_size);

/// Input positions (rows x width) per forward and backward pass of the gradient methods: large
/// enough for the products to run at full speed, small enough to keep a pass's memory to ~100 MB.
constexpr std::int64_t kGradientBudget = 1 << 15;

/// Probabilities [rows, labels] (row-major, in the order of `rows`) of padded ids, in
/// length-bucketed batches.
std::vector<float> predict(torch::jit::Module& module, const text::PaddedSequences& x, text::Side padding,
                           const std::vector<std::int64_t>& rows, std::int64_t batch_size) {
  nn::EvalModeGuard eval(module);
  models::TextClassifier model(module);
  std::vector<float> out;
  std::int64_t labels = 0;
  for_each_bucket(rows, x.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor probs = model.forward(batch_ids(x, batch, Width::kLongestRow, padding)).scores.to(torch::kFloat32).contiguous();
    if (out.empty()) {
      labels = probs.size(1);
      out.assign(rows.size() * static_cast<std::size_t>(labels), 0.0f);
    }
    const float* p = probs.data_ptr<float>();
    for (std::size_t i = 0; i < batch.size(); ++i)
      std::copy(p + static_cast<std::int64_t>(i) * labels, p + static_cast<std::int64_t>(i + 1) * labels,
                out.begin() + static_cast<std::int64_t>(at[i]) * labels);
  });
  return out;
}

/// p_l of versions of texts with tokens removed: version v keeps the tokens of rows[v.row] (real
/// ids, in order) that v.keep marks, padded as the training data was; [versions x labels].
std::vector<float> score_versions(torch::jit::Module& module, const TextDataConfig& config, const std::vector<const text::Sequence*>& rows,
                                  const std::vector<models::Version>& versions) {
  std::vector<text::Sequence> kept(versions.size());
  for (std::size_t v = 0; v < versions.size(); ++v) {
    const text::Sequence& ids = *rows.at(static_cast<std::size_t>(versions[v].row));
    for (std::size_t t = 0; t < ids.size() && t < versions[v].keep.size(); ++t)
      if (versions[v].keep[t]) kept[v].push_back(ids[t]);
  }
  text::PadOptions pad;
  pad.maxlen = std::max<std::int64_t>(1, config.maxlen);
  pad.padding = config.padding;
  const text::PaddedSequences x = text::pad_sequences(kept, pad);
  return predict(module, x, config.padding, all_rows(x.rows), kScoringBatchSize);
}

/// Up to `count` of the data's last rows (its validation end) with at least 3 tokens, their first
/// 12 tokens as the tokenizer reads them back (Keras' sequences_to_texts). Rows of sentences
/// (text/sentences.h) give their first 4 sentences' first 8 words, one sentence per line.
std::vector<std::string> example_texts(const io::PreparedData& data, const text::Tokenizer& tok, bool sentences, std::size_t count = 4) {
  std::vector<std::string> out;
  if (data.x.ids.empty()) return out;  // only the shape in memory (attn prepare's streaming write)
  for (std::int64_t r = data.x.rows - 1; r >= 0 && out.size() < count; --r) {
    const std::int64_t n = data.x.lengths[static_cast<std::size_t>(r)];
    if (n < 3) continue;
    const std::int32_t* row = data.x.ids.data() + r * data.x.cols + (data.padding == text::Side::kPre ? data.x.cols - n : 0);
    std::vector<text::Sequence> parts;
    if (!sentences) parts.emplace_back(row, row + std::min<std::int64_t>(n, 12));
    for (std::int64_t t = 0; sentences && t < n; ++t) {
      if (t == 0 || text::sentence_of(row[t]) != text::sentence_of(row[t - 1])) {
        if (parts.size() == 4) break;
        parts.emplace_back();
      }
      if (parts.back().size() < 8) parts.back().push_back(text::word_of(row[t]));
    }
    std::string text;
    for (const std::string& part : tok.sequences_to_texts(parts)) text += (text.empty() ? "" : "\n") + part;
    if (!text.empty()) out.push_back(text);
  }
  return out;
}

class TextDataset : public Dataset {
 public:
  /// `scored` (empty: every row) marks the rows whose labels count (Kaggle's test_labels.csv -1 rows do not).
  TextDataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config, std::vector<bool> scored = {})
      : data_(std::move(data)), tokenizer_(std::move(tokenizer)), config_(std::move(config)), scored_(std::move(scored)) {
    config_.rows = data_.x.rows;
    config_.maxlen = data_.x.cols;
    config_.padding = data_.padding;
    if (config_.examples.empty()) config_.examples = example_texts(data_, tokenizer_, config_.sentences.enabled());
    if (!data_.label_names.empty()) {
      config_.labels = data_.label_names;
      labels_ = torch::from_blob(data_.labels.data(), {data_.x.rows, static_cast<std::int64_t>(data_.label_names.size())}, torch::kFloat32);
    }
  }

  std::int64_t rows() const override { return data_.x.rows; }
  const std::vector<std::int64_t>& lengths() const override { return data_.x.lengths; }

  Batch batch(const std::vector<std::int64_t>& rows, Width width) const override {
    Batch b;
    const torch::Tensor ids = batch_ids(data_.x, rows, width, data_.padding);
    b.tokens = ids.numel();
    b.inputs = {ids};
    if (labels_.defined()) b.targets = labels_.index_select(0, torch::tensor(rows, torch::kInt64));
    return b;
  }

  Loss loss(torch::jit::Module& model, const Batch& b, const torch::Tensor& pos_weight) const override {
    return binary_loss(models::TextClassifier(model).logits(b.inputs.at(0).toTensor()).scores, b.targets, pos_weight);
  }

  torch::Tensor word_ids(const std::vector<std::int64_t>& rows) const override {
    // A hierarchical model's ids carry their sentence above the word (text/sentences.h).
    return batch_ids(data_.x, rows, Width::kLongestRow, data_.padding).bitwise_and(text::kWordIdLimit - 1);
  }

  Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const override {
    Evaluation out;
    if (rows.empty()) return out;
    const std::vector<float> probs = score_shared(
        rows, data_.x.lengths, options.batch_size, options.sharing,
        [&](const std::vector<std::int64_t>& some) { return predict(model, data_.x, data_.padding, some, options.batch_size); });
    const std::size_t L = rows.empty() ? 0 : probs.size() / rows.size();
    if (labels_.defined()) {
      std::vector<float> y;
      std::vector<bool> keep;
      y.reserve(rows.size() * L);
      for (std::int64_t r : rows) {
        y.insert(y.end(), data_.labels.begin() + r * static_cast<std::int64_t>(L),
                 data_.labels.begin() + (r + 1) * static_cast<std::int64_t>(L));
        if (!scored_.empty()) keep.push_back(scored_[static_cast<std::size_t>(r)]);
      }
      out.metrics = classifier_metrics(probs, y, keep, config_.labels, options.detail, thresholds_);
    }
    if (options.detail == EvaluateOptions::Detail::kFull) {  // Kaggle's sample_submission layout
      std::vector<std::string> keys;
      for (std::int64_t r : rows) keys.push_back(data_.ids.empty() ? std::to_string(r + 1) : data_.ids[static_cast<std::size_t>(r)]);
      out.predictions_csv = predictions_csv("id", keys, config_.labels, probs, false);
    }
    return out;
  }

  nlohmann::json data_config() const override { return config_; }

  models::DataSizes sizes() const override {
    const auto& to = tokenizer_.options();
    models::DataSizes s;
    s.vocabulary = to.num_words && *to.num_words ? *to.num_words : tokenizer_.vocabulary_size() + 2;
    s.labels = static_cast<std::int64_t>(config_.labels.size());
    s.input_length = data_.x.cols;
    return s;
  }

  std::map<std::string, std::string> files() const override { return {{"tokenizer.json", tokenizer_.to_json()}}; }

  torch::Tensor positive_weights(const std::string& spec, const std::vector<std::int64_t>& rows) const override {
    return positive_weights_of(spec, data_.labels, config_.labels.size(), rows);
  }

  std::vector<VocabularyWord> vocabulary() const override {
    std::vector<VocabularyWord> words;
    const std::int64_t ids = sizes().vocabulary;
    for (std::int32_t id = 1; id < ids; ++id)
      if (const auto w = tokenizer_.index_word(id)) words.push_back({id, *w, tokenizer_.word_count(*w)});
    return words;
  }

  const text::Tokenizer& tokenizer() const { return tokenizer_; }
  const TextDataConfig& config() const { return config_; }
  /// Decision thresholds for precision, recall and F1 in a full evaluation.
  void set_thresholds(Thresholds thresholds) { thresholds_ = std::move(thresholds); }

 private:
  Thresholds thresholds_;
  io::PreparedData data_;
  text::Tokenizer tokenizer_;
  TextDataConfig config_;
  std::vector<bool> scored_;
  torch::Tensor labels_;
};

/// The text's chunks between the default separators (space, tab, newline).
std::vector<std::string> chunks_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

/// A CSV row's text, its 1-based data row and its id.
struct CsvText {
  std::string text;
  std::int64_t row = 0;
  std::string id;
};

/// The texts of `csv`'s `column` (with ids from `id_column` when the file has it): every row, or the
/// 1-based data rows `only` in that order; a row beyond the file is an error naming --rows.
std::vector<CsvText> read_texts(const std::string& csv, const std::string& column, const std::vector<std::int64_t>& only,
                                const std::string& id_column = "", std::int64_t limit = -1,
                                const std::function<bool(const std::string&)>& accept = nullptr) {
  text::CsvReader reader(csv);
  const std::size_t c = reader.column(column);
  const std::optional<std::size_t> id = id_column.empty() ? std::nullopt : reader.find_column(id_column);
  std::vector<CsvText> all;
  std::unordered_map<std::int64_t, std::size_t> wanted;
  for (std::size_t i = 0; i < only.size(); ++i) wanted.emplace(only[i], i);
  std::vector<CsvText> picked(only.size());
  std::int64_t row = 0, found = 0;
  text::CsvRecord record;
  while (reader.next(record)) {
    ++row;
    CsvText t{std::move(record.fields[c]), row, id ? record.fields[*id] : std::string()};
    if (only.empty()) {
      if (accept && !accept(t.text)) continue;
      all.push_back(std::move(t));
      if (limit >= 0 && static_cast<std::int64_t>(all.size()) >= limit) break;
    } else if (const auto it = wanted.find(row); it != wanted.end()) {
      picked[it->second] = std::move(t);
      ++found;
    }
  }
  for (std::int64_t r : only)
    if (r > row)
      throw std::invalid_argument("--rows: row " + std::to_string(r) + " is not in 1.." + std::to_string(row) + " (" + csv + ")");
  return only.empty() ? all : picked;
}

/// Hierarchical models: `prepared`'s rows become the documents of sentences (text/sentences.h) of
/// `csv`'s texts, post-padded to max_sentences x max_words, the sizes of `layout` that are 0 taken
/// from the data (text::layout_from); recorded in `config` and in prepare.json's "sentences".
void read_sentences(data::Prepared& prepared, const std::string& csv, const std::string& text_column, text::SentenceLayout layout,
                    TextDataConfig& config, int threads) {
  std::vector<std::string> texts;
  for (CsvText& t : read_texts(csv, text_column, {})) texts.push_back(std::move(t.text));
  if (static_cast<std::int64_t>(texts.size()) != prepared.data.x.rows)
    throw std::logic_error(csv + ": " + std::to_string(texts.size()) + " texts read as sentences, " + std::to_string(prepared.data.x.rows) +
                           " prepared");
  nlohmann::ordered_json report;
  // Every text split and tokenised once, for the sizes taken from the data and for the rows.
  const auto documents = text::read_documents(prepared.tokenizer, texts, {text::kSentenceLimit, 1}, threads);
  texts = {};
  if (layout.max_sentences == 0 || layout.max_words == 0) {
    const text::SentenceLayout from_data = text::layout_from(text::sentence_stats(documents));
    if (layout.max_sentences == 0) layout.max_sentences = from_data.max_sentences;
    if (layout.max_words == 0) layout.max_words = from_data.max_words;
    report["from_data"] = "95th percentiles of sentences per document and words per sentence, capped at 64 and 100";
  }
  std::vector<text::Sequence> rows;
  rows.reserve(documents.size());
  for (const auto& document : documents) rows.push_back(text::encode_document(document, layout));
  prepared.pad.maxlen = layout.max_sentences * layout.max_words;
  prepared.pad.padding = prepared.pad.truncating = text::Side::kPost;
  prepared.data.x = text::pad_sequences(rows, prepared.pad);
  prepared.data.padding = text::Side::kPost;
  prepared.sequences = {};
  report["max_sentences"] = layout.max_sentences;
  report["max_words"] = layout.max_words;
  prepared.report["sentences"] = report;
  prepared.report["padding"] = {{"maxlen", prepared.data.x.cols}, {"padding", "post"}, {"truncating", "post"}, {"value", 0}};
  config.sentences = layout;
  config.truncating = text::Side::kPost;
}

/// --rows N,M,...: positive 1-based rows.
std::vector<std::int64_t> parse_rows(const std::vector<std::string>& list) {
  std::vector<std::int64_t> rows;
  for (const std::string& r : list) {
    char* end = nullptr;
    const long long v = std::strtoll(r.c_str(), &end, 10);
    if (r.empty() || *end != '\0' || v < 1) throw std::invalid_argument("--rows: '" + r + "' is not a 1-based row number");
    rows.push_back(v);
  }
  return rows;
}

/// A CSV's texts as faithfulness measures them: the first `rows` data rows whose text keeps at
/// least two tokens (after the tokenizer and maxlen), their tokens the units, a removed token
/// masked like padding (the rows' real ids, less the removed, padded as the training data was).
class TextErasures : public Erasures {
 public:
  TextErasures(torch::jit::Module module, const TextDataConfig& config, const text::Tokenizer& tokenizer, const std::string& csv,
               const std::string& text_column, const std::string& id_column, std::int64_t rows)
      : module_(std::move(module)), config_(config) {
    const auto maxlen = static_cast<std::size_t>(std::max<std::int64_t>(1, config.maxlen));
    const auto keeps_two = [&](const std::string& t) { return std::min(sequences_of(tokenizer, config, {t}).front().size(), maxlen) >= 2; };
    texts_ = read_texts(csv, text_column, {}, id_column, rows, keeps_two);
    if (static_cast<std::int64_t>(texts_.size()) < rows)
      throw std::invalid_argument("--rows " + std::to_string(rows) + ": " + csv + " has only " + std::to_string(texts_.size()) +
                                  " rows whose text keeps at least 2 tokens");
    std::vector<std::string> all;
    for (const CsvText& t : texts_) all.push_back(t.text);
    x_ = text::pad_sequences(sequences_of(tokenizer, config, all), pad_of(config));
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
    return score_versions(module_, config_, rows, versions);
  }

 private:
  torch::jit::Module module_;
  TextDataConfig config_;
  std::vector<CsvText> texts_;
  text::PaddedSequences x_;
  std::unordered_map<std::int64_t, text::Sequence> ids_;  ///< the real ids of the rows attributed so far
};

class TextModel : public TrainedModel {
 public:
  explicit TextModel(models::SavedModel saved)
      : TrainedModel(std::move(saved)),
        config_(parse_data_config<TextDataConfig>(model_.config.at("data"), model_.path)),
        tokenizer_(embedded_tokenizer(model_, "tokenizer.json")) {
    if (config_.labels.empty() || config_.maxlen < 1)
      throw std::runtime_error(model_.path + ": embedded config.json: keys 'data.labels' and 'data.maxlen' are required");
  }

  std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs& options,
                                 const std::function<std::vector<std::string>()>& stdin_lines) const override {
    if (!options.given("csv")) {
      if (options.given("rows") || options.given("text-column")) throw std::invalid_argument("--rows and --text-column need --csv");
      return text_inputs(arguments, stdin_lines);
    }
    if (!arguments.empty()) throw std::invalid_argument("give texts either as arguments or with --csv, not both");
    std::vector<Input> inputs;
    for (const CsvText& t : read_texts(options.text("csv"), options.get("text-column").value_or(config_.text_column),
                                       options.given("rows") ? parse_rows(options.list("rows")) : std::vector<std::int64_t>{}))
      inputs.push_back({t.text, {}});
    return inputs;
  }

  std::int64_t targets() const override { return static_cast<std::int64_t>(config_.labels.size()); }

  std::vector<models::Method> methods() const override {
    using models::Method;
    std::vector<Method> out = {Method::kAttention};
    models::TextClassifier model(model_.module);
    if (model.has_embedded()) out.insert(out.end(), {Method::kGradient, Method::kGradInput, Method::kIntegratedGradients});
    out.push_back(Method::kLeaveOneOut);
    if (model.has_self_attention()) out.push_back(Method::kAttentionRollout);
    return out;
  }

  std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size, const ExplainOptions& options) override {
    models::TextClassifier model(module());
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    return std::make_unique<ExplanationList<report::TextExplanation>>(
        explain_texts(model, tokenizer_, config_, texts, batch_size, options));
  }

  std::unique_ptr<Erasures> erasures(const std::string& csv, const data::Inputs& options, std::int64_t rows, int) override {
    return std::make_unique<TextErasures>(module(), config_, tokenizer_, csv, options.get("text-column").value_or(config_.text_column),
                                          options.get("id-column").value_or(config_.id_column), rows);
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["task"] = text_classification().name();
    j["input"] = "texts";
    j["labels"] = config_.labels;
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
    const text::PaddedSequences x = text::pad_sequences(sequences_of(tokenizer_, config_, texts), pad_of(config_));
    const std::vector<float> probs = tasks::predict(module(), x, config_.padding, all_rows(x.rows), batch_size);
    std::vector<nlohmann::ordered_json> out;
    const std::size_t L = config_.labels.size();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      nlohmann::ordered_json p = nlohmann::ordered_json::object();
      for (std::size_t k = 0; k < L; ++k) p[config_.labels[k]] = probs[i * L + k];
      out.push_back({{"probabilities", p}});
    }
    return out;
  }

  std::unique_ptr<Dataset> open_csv(const std::string& csv, const data::Inputs& options, int threads) const override {
    const Thresholds thresholds(options, config_.labels.size());  // checked before the work
    data::PrepareOptions o;
    o.csv = csv;
    o.columns.text_column = options.get("text-column").value_or(config_.text_column);
    o.columns.id_column = options.get("id-column").value_or(config_.id_column);
    o.columns.id_required = options.given("id-column") || options.given("labels-csv");
    o.columns.label_columns = config_.labels;
    o.columns.labels_optional = true;
    o.apply_loaded_tokenizer = &tokenizer_;
    o.pad.maxlen = config_.maxlen;  // tokenised and padded exactly as the training data was
    o.pad.padding = config_.padding;
    o.pad.truncating = config_.truncating;
    o.threads = threads;
    data::Prepared prepared = data::prepare_csv(o);
    TextDataConfig config = config_;
    if (config.sentences.enabled()) read_sentences(prepared, csv, o.columns.text_column, config_.sentences, config, threads);
    config.dir.clear();
    config.text_column = o.columns.text_column;
    config.id_column = o.columns.id_column;
    std::vector<bool> scored;
    if (options.given("labels-csv")) scored = join_kaggle_labels(prepared.data, options.text("labels-csv"), csv);
    auto dataset = std::make_unique<TextDataset>(std::move(prepared.data), tokenizer_, std::move(config), std::move(scored));
    dataset->set_thresholds(thresholds);
    return dataset;
  }

 private:
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
  text::Tokenizer tokenizer_;
};

class TextClassification : public Task {
 public:
  const char* name() const override { return "text-classification"; }

  std::string about(Command command) const override {
    switch (command) {
      case Command::kTrain:
        return "a CSV's text column (--text-column) tokenised as Keras does, 0/1 label columns (--labels)";
      case Command::kExplain:
        return "the label probabilities and every word's weight; texts as arguments, stdin lines or --csv";
      case Command::kEvaluate:
        return "predictions in Kaggle's sample_submission layout; with labels (or --labels-csv) ROC AUC per label, loss, accuracy";
      case Command::kFaithfulness:
        return "each method's top tokens removed, or kept alone (rows keeping at least 2 tokens)";
      case Command::kExport:
        return "forward(ids) -> (probabilities, attention); embeddings(ids), logits_embedded(x, ids) for gradients";
    }
    return "";
  }

  std::vector<data::InputSpec> inputs(Command command) const override {
    switch (command) {
      case Command::kTrain: {
        std::vector<data::InputSpec> specs = data::prepare_inputs();
        specs.insert(specs.begin() + 1, {"data", "Text models: prepared data directory (attn prepare --out DIR) instead of --csv", ""});
        specs.insert(specs.begin() + 2, val_csv_input());
        specs.push_back({"max-sentences",
                         "Hierarchical models: sentences of a document read (default: the data's 95th percentile, at most 64)", "",
                         data::InputSpec::Kind::kValue, "Sentences (hierarchical models)"});
        specs.push_back({"max-words", "Hierarchical models: words of a sentence read (default: the data's 95th percentile, at most 100)",
                         "", data::InputSpec::Kind::kValue, "Sentences (hierarchical models)"});
        return specs;
      }
      case Command::kExplain:
        return {explain_csv_input(),
                {"text-column", "Text models: the column holding the text (default: the training run's)", ""},
                explain_rows_input()};
      case Command::kFaithfulness:
        return {{"text-column", "Text models: the column holding the text (default: the training run's)", ""},
                {"id-column", "Text models: the column holding row ids, for --per-row (default: the training run's)", ""}};
      case Command::kEvaluate:
        return {csv_input("CSV to score"),
                {"text-column", "Text models: the column holding the text (default: the training run's)", ""},
                {"id-column", "Text models: the column holding row ids (default: the training run's)", ""},
                {"labels-csv", "Text models: labels by id, Kaggle's test_labels.csv layout (-1 = not scored)", ""},
                thresholds_input()};
      case Command::kExport:
        return {};
    }
    return {};
  }

  std::unique_ptr<Dataset> open(const data::Inputs& in, const models::ModelEntry& model, const std::string& run_dir,
                                int threads) const override {
    TextDataConfig config;
    std::unique_ptr<TextDataset> dataset;
    text::SentenceLayout layout;  // hierarchical models: 0 = from the data
    for (const char* flag : {"max-sentences", "max-words"}) {
      if (!in.given(flag)) continue;
      if (!model.reads_sentences)
        throw std::invalid_argument(std::string("--") + flag + " applies to hierarchical models; " + model.name + " reads words");
      const std::int64_t v = in.integer(flag);
      if (v < 1 || v > text::kSentenceLimit)
        throw std::invalid_argument(std::string("--") + flag + " must be in 1.." + std::to_string(text::kSentenceLimit) + ", got " +
                                    std::to_string(v));
      (std::string(flag) == "max-sentences" ? layout.max_sentences : layout.max_words) = v;
    }
    if (in.given("data")) {
      if (model.reads_sentences) throw std::invalid_argument("--data: " + model.name + " reads the texts' sentences; give the CSV (--csv)");
      if (in.given("csv")) throw std::invalid_argument("give one of --csv and --data");
      for (const data::InputSpec& s : data::prepare_inputs())
        if (in.given(s.name)) throw std::invalid_argument("--" + s.name + " prepares a --csv; the data in --data was prepared already");
      config.dir = fs::absolute(in.text("data")).string();
      read_prepare_report(config);
      dataset = std::make_unique<TextDataset>(io::read_prepared(file_in(config.dir, "data.pt")),
                                              read_tokenizer(file_in(config.dir, "tokenizer.json")), config);
    } else {
      const data::PrepareOptions o = data::prepare_options(in, threads);
      config.dir = fs::absolute(fs::path(run_dir) / "data").string();
      config.truncating = o.pad.truncating;
      config.text_column = o.columns.text_column;
      config.id_column = o.columns.id_column;
      data::Prepared prepared = data::prepare_csv(o);
      if (prepared.data.label_names.empty()) throw std::runtime_error(o.csv + ": the data has no label columns (--labels)");
      if (model.reads_sentences) read_sentences(prepared, o.csv, o.columns.text_column, layout, config, threads);
      data::write_prepared_dir(prepared, config.dir);
      dataset = std::make_unique<TextDataset>(std::move(prepared.data), std::move(prepared.tokenizer), config);
    }
    if (dataset->data_config().at("labels").empty()) throw std::runtime_error(config.dir + ": the data has no label columns");
    return dataset;
  }

  std::unique_ptr<Dataset> reopen(const nlohmann::json& data_config, const std::string& run_dir, int) const override {
    const auto config = parse_data_config<TextDataConfig>(data_config, file_in(run_dir, "config.json"));
    return std::make_unique<TextDataset>(io::read_prepared(file_in(config.dir, "data.pt")),
                                         read_tokenizer(file_in(run_dir, "tokenizer.json")), config);
  }

  std::unique_ptr<Dataset> open_validation(const std::string& csv, const Dataset& training, const std::string& run_dir,
                                           int threads) const override {
    const auto& train = dynamic_cast<const TextDataset&>(training);
    TextDataConfig config = train.config();
    data::PrepareOptions o;
    o.csv = csv;
    o.columns.text_column = config.text_column;
    o.columns.id_column = config.id_column;
    o.columns.label_columns = config.labels;
    o.apply_loaded_tokenizer = &train.tokenizer();  // read as the training rows were
    o.pad.maxlen = config.maxlen;
    o.pad.padding = config.padding;
    o.pad.truncating = config.truncating;
    o.threads = threads;
    data::Prepared prepared = data::prepare_csv(o);
    if (config.sentences.enabled()) read_sentences(prepared, csv, o.columns.text_column, config.sentences, config, threads);
    config.dir = fs::absolute(fs::path(run_dir) / "data" / "validation").string();
    data::write_prepared_dir(prepared, config.dir);
    return std::make_unique<TextDataset>(std::move(prepared.data), train.tokenizer(), config);
  }

  std::unique_ptr<TrainedModel> use(models::SavedModel model) const override { return std::make_unique<TextModel>(std::move(model)); }

 private:
  /// What `attn prepare` recorded in DIR/prepare.json: the columns and the truncation side.
  static void read_prepare_report(TextDataConfig& config) {
    const std::string path = file_in(config.dir, "prepare.json");
    if (!fs::exists(path)) return;
    try {
      const auto report = nlohmann::json::parse(io::read_file(path));
      config.text_column = report.value("text_column", config.text_column);
      if (report.contains("id_column") && report["id_column"].is_string()) config.id_column = report["id_column"];
      if (report.contains("padding")) config.truncating = report["padding"].value("truncating", config.truncating);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(path + ": not valid JSON: " + e.what());
    }
  }
};

}  // namespace

const Task& text_classification() {
  static const TextClassification task;
  return task;
}

std::unique_ptr<Dataset> text_dataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config) {
  return std::make_unique<TextDataset>(std::move(data), std::move(tokenizer), std::move(config));
}

namespace {

bool asked(const ExplainOptions& o, models::Method m) { return std::find(o.methods.begin(), o.methods.end(), m) != o.methods.end(); }

/// The scores of options.methods for one bucket of rows: ids [B, W] as batch_ids gives them, with
/// row i's real ids at out[i]->ids and its probabilities and attention already in out[i].
void add_importance(torch::jit::Module& module, const TextDataConfig& config, const torch::Tensor& ids, const ExplainOptions& options,
                    const std::vector<report::TextExplanation*>& out) {
  using models::Method;
  models::TextClassifier model(module);
  const std::int64_t B = ids.size(0), W = ids.size(1), K = static_cast<std::int64_t>(config.labels.size());
  std::vector<std::int64_t> n(static_cast<std::size_t>(B)), first(static_cast<std::size_t>(B));
  for (std::size_t i = 0; i < out.size(); ++i) {
    n[i] = static_cast<std::int64_t>(out[i]->ids.size());
    first[i] = config.padding == text::Side::kPre ? W - n[i] : 0;  // the row's real positions
  }
  // [B, K, W] scores as [labels][real positions] for row i.
  const auto per_label = [&](const torch::Tensor& scores, std::size_t i) {
    std::vector<std::vector<float>> rows;
    const torch::Tensor r = scores[static_cast<std::int64_t>(i)].slice(1, first[i], first[i] + n[i]).to(torch::kFloat32).contiguous();
    for (std::int64_t k = 0; k < K; ++k) rows.emplace_back(r[k].data_ptr<float>(), r[k].data_ptr<float>() + n[i]);
    return rows;
  };
  models::GradientScores g;
  models::GradientOptions go;
  go.gradient = asked(options, Method::kGradient) || asked(options, Method::kGradInput);
  go.steps = asked(options, Method::kIntegratedGradients) ? options.steps : 0;
  go.budget = std::getenv("ATTN_BUDGET") ? std::atoll(std::getenv("ATTN_BUDGET")) : kGradientBudget;
  if (go.gradient || go.steps > 0) {
    const models::FrozenParameters frozen(module);  // gradients of the inputs only
    const torch::Tensor x = model.embeddings(ids);  // evaluation mode: no dropout
    const models::Targets logits = [&](const torch::Tensor& points, const torch::Tensor& rows) {
      return model.logits_embedded(points, ids.index_select(0, rows)).scores;
    };
    g = models::gradient_scores(logits, x, torch::zeros_like(x), K, go);  // baseline: zero embeddings, the mask unchanged
  }
  std::vector<std::vector<float>> loo;
  if (asked(options, Method::kLeaveOneOut)) {
    std::vector<text::Sequence> real(out.size());
    std::vector<const text::Sequence*> rows;
    for (std::size_t i = 0; i < out.size(); ++i) {
      real[i].assign(out[i]->ids.begin(), out[i]->ids.end());
      rows.push_back(&real[i]);
    }
    loo = models::leave_one_out([&](const std::vector<models::Version>& v) { return score_versions(module, config, rows, v); }, n, K);
  }
  std::vector<torch::Tensor> layers;
  if (asked(options, Method::kAttentionRollout)) layers = model.self_attention(ids);  // each [B, heads, W, W]
  const torch::Tensor gap = g.completeness_gap();
  for (std::size_t i = 0; i < out.size(); ++i) {
    report::TextExplanation& e = *out[i];
    for (Method m : options.methods) {
      report::Importance imp{models::method_name(m), {}};
      switch (m) {
        case Method::kAttention:
          imp.scores.assign(static_cast<std::size_t>(K), e.attention);
          break;
        case Method::kGradient:
          imp.scores = per_label(g.gradient, i);
          break;
        case Method::kGradInput:
          imp.scores = per_label(g.grad_input, i);
          break;
        case Method::kIntegratedGradients:
          imp.scores = per_label(g.integrated, i);
          break;
        case Method::kLeaveOneOut:
          for (std::int64_t k = 0; k < K; ++k) imp.scores.emplace_back(loo[i].begin() + k * n[i], loo[i].begin() + (k + 1) * n[i]);
          break;
        case Method::kAttentionRollout: {
          std::vector<torch::Tensor> mine;
          const auto b = static_cast<std::int64_t>(i);
          for (const torch::Tensor& l : layers)
            mine.push_back(l[b].slice(1, first[i], first[i] + n[i]).slice(2, first[i], first[i] + n[i]));
          const std::vector<float> r = n[i] > 0 ? models::attention_rollout(mine, torch::tensor(e.attention)) : std::vector<float>();
          imp.scores.assign(static_cast<std::size_t>(K), r);
          break;
        }
        case Method::kRandom:
          throw std::invalid_argument("random is faithfulness's floor, not an explanation");
      }
      e.importance.push_back(std::move(imp));
    }
    if (gap.defined()) {
      e.integrated.steps = options.steps;
      const torch::Tensor row = gap[static_cast<std::int64_t>(i)].to(torch::kFloat32).contiguous();
      e.integrated.completeness_gap.assign(row.data_ptr<float>(), row.data_ptr<float>() + K);
    }
  }
}

/// Rows `rows` of x explained (words left to align_words): ids, probabilities, attention, a
/// transformer's self-attention, and options.methods' scores, in length-bucketed batches.
std::vector<report::TextExplanation> explain_rows(torch::jit::Module& module, const TextDataConfig& config, const text::PaddedSequences& x,
                                                  const std::vector<std::int64_t>& rows, const ExplainOptions& options,
                                                  std::int64_t batch_size) {
  nn::EvalModeGuard eval(module);
  models::TextClassifier model(module);
  std::vector<report::TextExplanation> out(rows.size());
  for_each_bucket(rows, x.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor ids = batch_ids(x, batch, Width::kLongestRow, config.padding);
    const models::Scored scored = model.forward(ids);
    const torch::Tensor probs = scored.scores.to(torch::kFloat32).contiguous(), att = scored.attention.to(torch::kFloat32).contiguous();
    std::vector<torch::Tensor> layers;
    if (model.has_self_attention()) layers = model.self_attention(ids);  // each [B, heads, W, W]
    torch::Tensor word_level, sentence_level;                            // hierarchical models: [B, W] each
    if (model.has_sentences()) {
      auto [w, s] = model.attention_levels(ids);
      word_level = w.to(torch::kFloat32).contiguous();
      sentence_level = s.to(torch::kFloat32).contiguous();
    }
    const std::int64_t width = ids.size(1);
    std::vector<report::TextExplanation*> mine;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      report::TextExplanation& e = out[at[i]];
      mine.push_back(&e);
      const auto b = static_cast<std::int64_t>(i);
      const std::int64_t n = x.lengths[static_cast<std::size_t>(batch[i])];
      const std::int64_t first = config.padding == text::Side::kPre ? width - n : 0;  // the row's real positions
      const torch::Tensor row_ids = ids[b].slice(0, first, first + n).contiguous();
      e.label_names = config.labels;
      e.ids.assign(row_ids.data_ptr<std::int64_t>(), row_ids.data_ptr<std::int64_t>() + n);
      e.probabilities.assign(probs[b].data_ptr<float>(), probs[b].data_ptr<float>() + probs.size(1));
      const torch::Tensor a = att[b].slice(0, first, first + n).contiguous();
      e.attention.assign(a.data_ptr<float>(), a.data_ptr<float>() + n);
      if (word_level.defined()) {
        const torch::Tensor w = word_level[b].slice(0, first, first + n).contiguous();
        const torch::Tensor s = sentence_level[b].slice(0, first, first + n).contiguous();
        e.word_attention.assign(w.data_ptr<float>(), w.data_ptr<float>() + n);
        e.sentence_attention.assign(s.data_ptr<float>(), s.data_ptr<float>() + n);
      }
      for (const torch::Tensor& layer : layers) {
        std::vector<std::vector<float>> heads;
        for (std::int64_t h = 0; h < layer.size(1); ++h) {
          const torch::Tensor w = layer[b][h].slice(0, first, first + n).slice(1, first, first + n).to(torch::kFloat32).contiguous();
          heads.emplace_back(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
        }
        if (n > 0) e.self_attention.push_back(std::move(heads));
      }
    }
    if (!options.methods.empty()) add_importance(module, config, ids, options, mine);
  });
  return out;
}

/// The label text and HTML show: options.label, or the most probable.
std::size_t shown_label(const report::TextExplanation& e, const TextDataConfig& config, const std::string& label) {
  if (!label.empty()) {
    for (std::size_t k = 0; k < config.labels.size(); ++k)
      if (config.labels[k] == label) return k;
    std::string all;
    for (const std::string& l : config.labels) all += (all.empty() ? "" : ", ") + l;
    throw std::invalid_argument("--label: '" + label + "' is not one of this model's labels (" + all + ")");
  }
  return static_cast<std::size_t>(std::max_element(e.probabilities.begin(), e.probabilities.end()) - e.probabilities.begin());
}

}  // namespace

std::vector<report::TextExplanation> explain_texts(models::TextClassifier& model, const text::Tokenizer& tok, const TextDataConfig& config,
                                                   const std::vector<std::string>& texts, std::int64_t batch_size,
                                                   const ExplainOptions& options) {
  // The texts' ids, cut to maxlen as the training data was (Keras' truncating 'pre' keeps a long
  // text's end), run in length-bucketed batches; each row's outputs are read at its real positions.
  const std::vector<text::Sequence> seqs = sequences_of(tok, config, texts);
  const text::PaddedSequences x = text::pad_sequences(seqs, pad_of(config));
  if (!options.label.empty() && !texts.empty()) (void)shown_label(report::TextExplanation{}, config, options.label);  // before the work
  torch::jit::Module module = model.module();
  std::vector<report::TextExplanation> out = explain_rows(module, config, x, all_rows(x.rows), options, batch_size);
  for (std::size_t t = 0; t < texts.size(); ++t) {
    if (config.sentences.enabled())
      align_sentences(out[t], tok, config, texts[t]);
    else
      align_words(out[t], tok, config, texts[t], seqs[t].size());
    if (!out[t].importance.empty()) out[t].shown_label = shown_label(out[t], config, options.label);
  }
  return out;
}

report::TextExplanation explain_text(models::TextClassifier& model, const text::Tokenizer& tok, const TextDataConfig& config,
                                     const std::string& text, const ExplainOptions& options) {
  return explain_texts(model, tok, config, {text}, 1, options).front();
}

namespace {

/// Where a piece of text's ids sit in an explanation: the piece's tokenizer emits `all` ids, the
/// model reads those but the first `cut_front` and the last `cut_back`, from entry `offset` of e.ids.
struct IdSpan {
  std::size_t all = 0, cut_front = 0, cut_back = 0, offset = 0;
  std::string cut_reason;  ///< a cut word's reason
};

/// Appends each word of `text` to e.words with its tokens, its status and the attention of its
/// kept tokens (read at `span`).
void append_words(report::TextExplanation& e, const text::Tokenizer& tok, const std::string& text, const IdSpan& span) {
  // Words: each chunk's tokens, which (with the default separators) are the text's tokens in order.
  const auto num_words = tok.options().num_words.value_or(0);
  // (Temporaries are moved, not copied: a 10 MB comment has 1.8 million words.)
  std::vector<std::string> all_tokens = tok.tokenize(text);
  std::vector<std::vector<std::string>> per_chunk;
  std::vector<std::string> chunks = chunks_of(text);
  per_chunk.reserve(chunks.size());
  std::size_t joined = 0;  // the chunks' tokens so far, compared with the text's as they come
  bool same = true;
  for (const std::string& c : chunks) {
    per_chunk.push_back(tok.tokenize(c));
    for (const std::string& t : per_chunk.back()) same = same && joined < all_tokens.size() && all_tokens[joined++] == t;
  }
  if (!same || joined != all_tokens.size()) {  // other separators: one word per token
    chunks = all_tokens;
    per_chunk.clear();
    for (std::string& t : all_tokens) per_chunk.push_back({std::move(t)});
  }
  all_tokens = {};
  e.words.reserve(e.words.size() + chunks.size());
  const std::size_t all = span.all;
  std::size_t next_id = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    report::WordWeight w;
    w.word = std::move(chunks[i]);
    w.tokens = std::move(per_chunk[i]);
    if (w.tokens.empty()) {
      w.status = "filtered";
      w.reason = "only filtered characters";
    }
    for (const std::string& t : w.tokens) {
      const auto index = tok.word_index(t);
      const bool in_range = index && (num_words == 0 || *index < num_words);
      std::string status = in_range ? "kept" : tok.options().oov_token ? "oov" : "dropped";
      if (status != "dropped") {
        if (next_id >= all) throw std::logic_error("explain: tokens and ids do not line up");
        if (next_id < span.cut_front || next_id >= all - span.cut_back) {
          status = "dropped";
          w.reason = span.cut_reason;
        } else {
          const std::size_t at = span.offset + next_id - span.cut_front;
          if (w.count == 0) w.first = at;
          ++w.count;
          w.weight += e.attention[at];
        }
        ++next_id;
      } else {
        w.reason = index ? "beyond num_words" : "unknown word";
      }
      // A word is kept if any of its tokens is; otherwise it takes its tokens' status.
      if (w.status.empty() || status == "kept" || (status == "oov" && w.status == "dropped")) w.status = status;
    }
    if (w.status == "kept" || w.status == "oov") w.reason.clear();
    e.words.push_back(std::move(w));
  }
  if (next_id != all) throw std::logic_error("explain: tokens and ids do not line up");
}

/// Fills e's words: each word of `text` with its tokens, its status and the attention of its kept
/// tokens. `all` is the text's token count before the maxlen cut.
void align_words(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text,
                 std::size_t all) {
  e.text = text;
  e.label_names = config.labels;
  const auto maxlen = static_cast<std::size_t>(config.maxlen);
  IdSpan span{all, 0, 0, 0, "beyond maxlen " + std::to_string(maxlen) + " (truncated as in training)"};
  if (maxlen > 0 && all > maxlen) (config.truncating == text::Side::kPre ? span.cut_front : span.cut_back) = all - maxlen;
  append_words(e, tok, text, span);
}

/// Fills e's sentences and words for a hierarchical model: each sentence of `text` with its weight
/// and status, its words with theirs (words beyond max_words and sentences beyond max_sentences
/// listed as cut).
void align_sentences(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text) {
  e.text = text;
  e.label_names = config.labels;
  const text::SentenceLayout& layout = config.sentences;
  std::size_t offset = 0;  // the sentence's first entry of e.ids
  for (const text::DocumentSentence& s : text::read_document(tok, text, layout)) {
    report::SentenceWeight sw;
    sw.text = text.substr(s.begin, s.end - s.begin);
    while (!sw.text.empty() && std::isspace(static_cast<unsigned char>(sw.text.back()))) sw.text.pop_back();
    sw.first_word = e.words.size();
    const std::size_t kept = s.index < 0 ? 0 : std::min<std::size_t>(s.ids.size(), static_cast<std::size_t>(layout.max_words));
    IdSpan span{s.ids.size(), 0, s.ids.size() - kept, offset,
                s.index < 0 ? "beyond max_sentences " + std::to_string(layout.max_sentences) + " (cut as in training)"
                            : "beyond max_words " + std::to_string(layout.max_words) + " (cut as in training)"};
    append_words(e, tok, text.substr(s.begin, s.end - s.begin), span);
    sw.words = e.words.size() - sw.first_word;
    if (s.empty()) {
      sw.status = "empty";
      sw.reason = "no word the tokenizer keeps";
    } else if (s.index < 0) {
      sw.status = "dropped";
      sw.reason = "beyond max_sentences " + std::to_string(layout.max_sentences);
    } else {
      sw.status = "read";
      if (offset >= e.sentence_attention.size()) throw std::logic_error("explain: sentences and ids do not line up");
      sw.weight = e.sentence_attention[offset];
    }
    e.sentences.push_back(std::move(sw));
    offset += kept;
  }
  if (offset != e.ids.size()) throw std::logic_error("explain: sentences and ids do not line up");
}

}  // namespace
}  // namespace attn::tasks
