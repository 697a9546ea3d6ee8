// Text classifiers' data (see text_dataset.h).
#include "text_dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include <ATen/Parallel.h>
#include <torch/script.h>

#include "attn/data/rationales.h"
#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data_reader.h"
#include "attn/metrics/bias.h"
#include "attn/nn/script_module.h"
#include "attn/text/csv.h"
#include "attn/text/dataset.h"
#include "attn/text/perturb.h"
#include "task_support.h"
#include "text_explanation.h"
#include "text_training.h"

namespace attn::tasks {

namespace fs = std::filesystem;

std::string text_file_in(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

namespace {

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
  TextDataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config, std::vector<bool> scored, Thresholds thresholds,
              IdentityColumns identities, TrainingSignals signals)
      : thresholds_(std::move(thresholds)),
        kind_(config.one_class_per_row() ? LabelKind::kOneClass : LabelKind::kIndependent),
        data_(std::move(data)),
        tokenizer_(std::move(tokenizer)),
        config_(std::move(config)),
        scored_(std::move(scored)),
        marks_(std::move(signals.marks)),
        identities_(std::move(identities)),
        row_weights_(std::move(signals.row_weights)),
        copies_(std::move(signals.counterfactuals)) {
    tokenizer_.read_deobfuscated(config_.deobfuscate);  // (tokenizer.json, Keras' format, cannot say so)
    if (!row_weights_.empty() && static_cast<std::int64_t>(row_weights_.size()) != data_.x.rows)
      throw std::logic_error("text dataset: " + std::to_string(row_weights_.size()) + " row weights for " + std::to_string(data_.x.rows) +
                             " rows");
    config_.rows = data_.x.rows;
    config_.maxlen = data_.x.cols;
    config_.padding = data_.padding;
    if (config_.subword_buckets > 0 && !data_.x.subwords)  // training data: every word is the tokenizer's
      data_.x.subwords = subwords_of(std::make_shared<const text::Tokenizer>(tokenizer_), config_);
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
    b.inputs = {model_ids(data_.x, ids)};
    if (labels_.defined()) b.targets = labels_.index_select(0, torch::tensor(rows, torch::kInt64));
    if (!marks_.empty()) b.attention_targets = attention_targets(rows, ids.size(1));
    if (!row_weights_.empty()) {
      std::vector<float> w;
      for (std::int64_t r : rows) w.push_back(row_weights_[static_cast<std::size_t>(r)]);
      b.row_weights = torch::tensor(w, torch::kFloat32);
    }
    if (!copies_.empty()) add_counterfactuals(rows, width, b);
    return b;
  }

  Loss loss(torch::jit::Module& model, const Batch& b, const torch::Tensor& weights) const override {
    // An ensemble's members each learn by their own loss (models/ensemble.h): the loss is their mean.
    models::TextClassifier classifier(model);
    const std::vector<models::Scored> outs = classifier.member_logits(b.inputs.at(0).toTensor());
    std::vector<models::Scored> copies;  // each member's logits of the rows' counterfactual copies
    if (b.counterfactual_inputs.defined()) copies = classifier.member_logits(b.counterfactual_inputs);
    Loss total;
    for (std::size_t m = 0; m < outs.size(); ++m) {
      const models::Scored& out = outs[m];
      Loss loss = kind_ == LabelKind::kOneClass ? class_loss(out.scores, b.targets, weights, b.row_weights)
                                                : binary_loss(out.scores, b.targets, weights, b.row_weights);
      if (b.attention_targets.defined())
        loss.value = loss.value + config_.rationale_weight * rationale_loss(out.attention, b.attention_targets);
      if (!copies.empty())
        loss.value = loss.value + config_.counterfactual_weight * counterfactual_loss(out.scores.index_select(0, b.counterfactual_rows),
                                                                                      copies[m].scores, kind_, out.scores.size(0));
      if (outs.size() == 1) return loss;
      total.value = total.value.defined() ? total.value + loss.value : loss.value;
      total.accuracy += loss.accuracy;
    }
    total.value = total.value / static_cast<double>(outs.size());
    total.accuracy /= static_cast<double>(outs.size());
    return total;
  }

  std::vector<std::string> metric_names() const override { return classifier_metric_names(kind_); }

  torch::Tensor word_ids(const std::vector<std::int64_t>& rows) const override {
    // A hierarchical model's ids carry their sentence above the word (text/sentences.h); a model
    // with subwords reads its ids' word rows.
    const torch::Tensor ids = batch_ids(data_.x, rows, Width::kLongestRow, data_.padding);
    if (data_.x.subwords) return model_ids(data_.x, ids).select(2, 0).contiguous();
    return ids.bitwise_and(text::kWordIdLimit - 1);
  }

  std::string logit_adjustment() const override { return kind_ == LabelKind::kOneClass ? "macro-f1" : ""; }
  metrics::LogitAdjustment logit_offsets(torch::jit::Module& model, const std::vector<std::int64_t>& rows) const override {
    if (kind_ != LabelKind::kOneClass || !labels_.defined() || rows.empty()) return {};
    const std::vector<float> probs = predict_texts(model, data_.x, data_.padding, rows, kScoringBatchSize);
    return metrics::macro_f1_offsets(probs, labels_of(rows), config_.labels.size());
  }

  Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const override {
    Evaluation out;
    if (rows.empty()) return out;
    const std::vector<float> probs = score_shared(
        rows, data_.x.lengths, options.batch_size, options.sharing,
        [&](const std::vector<std::int64_t>& some) { return predict_texts(model, data_.x, data_.padding, some, options.batch_size); });
    const std::size_t L = rows.empty() ? 0 : probs.size() / rows.size();
    if (labels_.defined()) {
      const std::vector<float> y = labels_of(rows);
      std::vector<bool> keep;
      if (!scored_.empty())
        for (std::int64_t r : rows) keep.push_back(scored_[static_cast<std::size_t>(r)]);
      const std::size_t S = config_.scored_labels();
      if (S == L) {
        out.metrics = classifier_metrics(probs, y, keep, config_.labels, kind_, options.detail, thresholds_);
      } else {  // the auxiliary outputs: reported apart, not scored
        const auto columns = [&](const std::vector<float>& all, std::size_t from, std::size_t to) {
          std::vector<float> some;
          for (std::size_t i = 0; i < rows.size(); ++i) some.insert(some.end(), all.begin() + i * L + from, all.begin() + i * L + to);
          return some;
        };
        const std::vector<std::string> scored(config_.labels.begin(), config_.labels.begin() + S),
            aux(config_.labels.begin() + S, config_.labels.end());
        out.metrics = classifier_metrics(columns(probs, 0, S), columns(y, 0, S), keep, scored, kind_, options.detail, thresholds_);
        const nlohmann::ordered_json a = classifier_metrics(columns(probs, S, L), columns(y, S, L), keep, aux, LabelKind::kIndependent,
                                                            EvaluateOptions::Detail::kMetrics, Thresholds());
        out.metrics["aux_auc"] = a.at("auc");
        out.metrics["aux_mean_auc"] = a.at("mean_auc");
      }
      if (options.detail == EvaluateOptions::Detail::kFull && !identities_.names.empty()) add_bias(rows, probs, out);
    }
    if (options.detail == EvaluateOptions::Detail::kFull) {  // Kaggle's sample_submission layout
      std::vector<std::string> keys;
      for (std::int64_t r : rows) keys.push_back(data_.ids.empty() ? std::to_string(r + 1) : data_.ids[static_cast<std::size_t>(r)]);
      out.probabilities = probs;
      out.predictions_csv = predictions_csv("id", keys, config_.labels, probs,
                                            kind_ == LabelKind::kOneClass ? PredictionColumn::kClass : PredictionColumn::kNone);
    }
    return out;
  }

  nlohmann::json data_config() const override {
    nlohmann::json j = config_;
    if (!config_.deobfuscate) j.erase("deobfuscate");  // config.json as models without them have always had it
    if (!config_.subword_skeletons) j.erase("subword_skeletons");
    if (config_.counterfactual_weight == 0) j.erase("counterfactual_weight"), j.erase("counterfactual_terms");
    return j;
  }

  models::DataSizes sizes() const override {
    const auto& to = tokenizer_.options();
    models::DataSizes s;
    s.vocabulary = to.num_words && *to.num_words ? *to.num_words : tokenizer_.vocabulary_size() + 2;
    s.labels = static_cast<std::int64_t>(config_.labels.size());
    s.one_class_per_row = kind_ == LabelKind::kOneClass;
    s.input_length = data_.x.cols;
    s.subword_buckets = config_.subword_buckets;
    s.subword_skeletons = config_.subword_skeletons;
    return s;
  }

  std::map<std::string, std::string> files() const override { return {{"tokenizer.json", tokenizer_.to_json()}}; }

  torch::Tensor loss_weights(const LossWeights& spec, const std::vector<std::int64_t>& rows) const override {
    return loss_weights_of(spec, kind_, data_.labels, config_.labels.size(), rows);
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

 private:
  /// The label rows of `rows` ([rows, labels] row-major).
  std::vector<float> labels_of(const std::vector<std::int64_t>& rows) const {
    const std::int64_t L = static_cast<std::int64_t>(data_.label_names.size());
    std::vector<float> y;
    y.reserve(rows.size() * static_cast<std::size_t>(L));
    for (std::int64_t r : rows) y.insert(y.end(), data_.labels.begin() + r * L, data_.labels.begin() + (r + 1) * L);
    return y;
  }

  Thresholds thresholds_;
  LabelKind kind_;
  io::PreparedData data_;
  text::Tokenizer tokenizer_;
  TextDataConfig config_;
  std::vector<bool> scored_;
  RationaleMarks marks_;
  IdentityColumns identities_;
  std::vector<float> row_weights_;  ///< per row (empty: unweighted), mean 1
  Counterfactuals copies_;
  torch::Tensor labels_;

  /// The counterfactual copies of the batch's rows that have one: what the model reads for them,
  /// as wide as the batch, and their rows' positions in the batch.
  void add_counterfactuals(const std::vector<std::int64_t>& rows, Width width, Batch& b) const {
    std::vector<std::int64_t> copies, at;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (const std::int64_t c = copies_.copy_of_row[static_cast<std::size_t>(rows[i])]; c >= 0)
        copies.push_back(c), at.push_back(static_cast<std::int64_t>(i));
    if (copies.empty()) return;
    b.counterfactual_inputs = model_ids(copies_.x, batch_ids(copies_.x, copies, width, data_.padding));
    b.counterfactual_rows = torch::tensor(at, torch::kInt64);
  }

  /// Jigsaw 2019's bias metric of the identity columns over the scored rows (metrics["bias"]), and
  /// --bias-html's page.
  void add_bias(const std::vector<std::int64_t>& rows, const std::vector<float>& probs, Evaluation& out) const {
    const std::size_t L = config_.labels.size();
    const bool benign = identities_.benign.has_value();
    const std::size_t k = benign ? *identities_.benign : identities_.label;
    std::vector<float> scores;
    std::vector<std::uint8_t> positive;
    std::vector<std::vector<float>> annotations(identities_.names.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<std::size_t>(rows[i]);
      if (!scored_.empty() && !scored_[r]) continue;
      scores.push_back(benign ? 1.0f - probs[i * L + k] : probs[i * L + k]);  // (one class per row: the toxicity)
      positive.push_back(benign ? data_.labels[r * L + k] <= 0.5f : data_.labels[r * L + k] > 0.5f);
      for (std::size_t a = 0; a < annotations.size(); ++a) annotations[a].push_back(identities_.values[a][r]);
    }
    const std::string label = benign ? "not " + config_.labels[k] : config_.labels[k];
    try {
      const metrics::BiasFigures f = metrics::bias_figures(scores, positive, identities_.names, annotations);
      out.metrics["bias"] = to_json(f, label);
      if (!identities_.html.empty()) out.files.emplace_back(identities_.html, metrics::bias_heatmap_html(f, label));
    } catch (const std::invalid_argument& e) {
      out.metrics["bias"] = {{"label", label}, {"final", nullptr}, {"undefined", e.what()}};
    }
  }

  /// The rows' rationales as the attention they ask for [rows, width] (attention_target), each
  /// share at its entry's place in the padded row.
  torch::Tensor attention_targets(const std::vector<std::int64_t>& rows, std::int64_t width) const {
    torch::Tensor g = torch::zeros({static_cast<std::int64_t>(rows.size()), width}, torch::kFloat32);
    float* out = g.data_ptr<float>();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::int64_t n = data_.x.lengths[static_cast<std::size_t>(rows[i])];
      const std::int64_t first = data_.padding == text::Side::kPre ? width - n : 0;  // the row's real positions
      for (const auto& [t, share] : attention_target(marks_[static_cast<std::size_t>(rows[i])], config_.rationale_target))
        out[static_cast<std::int64_t>(i) * width + first + t] = share;
    }
    return g;
  }
};

/// What `attn prepare` recorded in DIR/prepare.json: the columns and the truncation side.
void read_prepare_report(TextDataConfig& config) {
  const std::string path = text_file_in(config.dir, "prepare.json");
  if (!fs::exists(path)) return;
  try {
    const auto report = nlohmann::json::parse(io::read_file(path));
    config.text_column = report.value("text_column", config.text_column);
    if (report.contains("id_column") && report["id_column"].is_string()) config.id_column = report["id_column"];
    if (report.contains("label_column") && report["label_column"].is_string()) config.label_column = report["label_column"];
    if (report.contains("target_threshold") && report["target_threshold"].is_number()) config.target_threshold = report["target_threshold"];
    if (report.contains("tokenizer") && report["tokenizer"].is_object())
      config.deobfuscate = report["tokenizer"].value("deobfuscate", false);
    if (report.contains("padding")) config.truncating = report["padding"].value("truncating", config.truncating);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace

text::PadOptions pad_of(const TextDataConfig& config) {
  text::PadOptions pad;
  pad.maxlen = std::max<std::int64_t>(1, config.maxlen);
  pad.padding = config.padding;
  pad.truncating = config.truncating;
  return pad;
}

void set_label_columns(text::TextCsvOptions& columns, const TextDataConfig& config) {
  if (config.one_class_per_row()) {
    columns.class_column = config.label_column;
    columns.classes = config.labels;  // a class the model does not know is an error naming the line
    columns.label_columns.clear();
  } else {
    columns.label_columns = config.labels;
    columns.target_threshold = config.target_threshold;
  }
}

std::vector<text::Sequence> sequences_of(const text::Tokenizer& tok, const TextDataConfig& config, const std::vector<std::string>& texts,
                                         int threads, text::SubwordVocabulary* subwords) {
  if (config.subword_buckets > 0) {
    if (!subwords) throw std::logic_error("sequences_of: a model with subwords reads a SubwordVocabulary's ids");
    return subwords->encode(texts);
  }
  return config.sentences.enabled() ? text::encode_documents(tok, texts, config.sentences, threads)
                                    : tok.texts_to_sequences(texts, threads);
}

text::PaddedSequences pad_texts(const std::shared_ptr<const text::Tokenizer>& tok, const TextDataConfig& config,
                                const std::vector<std::string>& texts, std::vector<text::Sequence>* sequences) {
  const std::shared_ptr<text::SubwordVocabulary> subwords = subwords_of(tok, config);
  std::vector<text::Sequence> rows = sequences_of(*tok, config, texts, at::get_num_threads(), subwords.get());
  text::PaddedSequences x = text::pad_sequences(rows, pad_of(config));
  x.subwords = subwords;
  if (sequences) *sequences = std::move(rows);
  return x;
}

std::vector<float> predict_texts(torch::jit::Module& module, const text::PaddedSequences& x, text::Side padding,
                                 const std::vector<std::int64_t>& rows, std::int64_t batch_size) {
  nn::EvalModeGuard eval(module);
  torch::NoGradGuard no_grad;  // outputs only: no graph kept for a backward pass
  models::TextClassifier model(module);
  std::vector<std::vector<float>> each(rows.size());  // each row's probabilities (batches run at once)
  for_each_bucket_at_once(rows, x.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor probs =
        model.forward(model_ids(x, batch_ids(x, batch, Width::kLongestRow, padding))).scores.to(torch::kFloat32).contiguous();
    const std::int64_t labels = probs.size(1);
    const float* p = probs.data_ptr<float>();
    for (std::size_t i = 0; i < batch.size(); ++i)
      each[at[i]].assign(p + static_cast<std::int64_t>(i) * labels, p + static_cast<std::int64_t>(i + 1) * labels);
  });
  std::vector<float> out;
  out.reserve(rows.size() * (each.empty() ? 0 : each.front().size()));
  for (const std::vector<float>& p : each) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<CsvText> read_texts(const std::string& csv, const std::string& column, const std::vector<std::int64_t>& only,
                                const std::string& id_column, std::int64_t limit, const std::function<bool(const std::string&)>& accept,
                                text::TableFormat format) {
  text::CsvReader reader(csv, format);
  const std::size_t c = reader.column(column);
  reader.require_string(c);
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

std::vector<std::string> texts_again(const data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                                     const TrainedModel::TextRewrite& rewrite) {
  std::vector<std::string> texts;
  for (CsvText& t : read_texts(csv, columns.text_column, {}, "", -1, nullptr, columns.format))
    texts.push_back(rewrite ? rewrite(t.text, t.row) : std::move(t.text));
  if (static_cast<std::int64_t>(texts.size()) != prepared.data.x.rows)
    throw std::logic_error(csv + ": " + std::to_string(texts.size()) + " texts read again, " + std::to_string(prepared.data.x.rows) +
                           " prepared");
  return texts;
}

void read_sentences(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns, text::SentenceLayout layout,
                    TextDataConfig& config, int threads, const TrainedModel::TextRewrite& rewrite) {
  std::vector<std::string> texts = texts_again(prepared, csv, columns, rewrite);
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

std::unique_ptr<Dataset> text_dataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config, std::vector<bool> scored,
                                      Thresholds thresholds, IdentityColumns identities, TrainingSignals signals) {
  return std::make_unique<TextDataset>(std::move(data), std::move(tokenizer), std::move(config), std::move(scored), std::move(thresholds),
                                       std::move(identities), std::move(signals));
}

bool reads_one_class_per_row(const data::Inputs& in) {
  if (in.given("label-column")) return true;
  if (!in.given("data")) return false;
  TextDataConfig config;
  config.dir = in.text("data");
  read_prepare_report(config);
  return config.one_class_per_row();
}

namespace {

/// A new run's training CSV prepared into config.dir (RUN_DIR/data) with what the training
/// features add to it (sentences, subwords, rationales, row weights, counterfactual copies), each
/// kept in a file there for --resume and the workers.
std::unique_ptr<Dataset> prepare_training_csv(const data::Inputs& in, const TextTrainingInputs& t, const models::ModelEntry& model,
                                              TextDataConfig config, int threads) {
  data::PrepareOptions o = data::prepare_options(in, threads);
  config.deobfuscate = o.tokenizer.deobfuscate;
  add_aux_labels(o.columns, config);
  config.truncating = o.pad.truncating;
  config.text_column = o.columns.text_column;
  config.id_column = o.columns.id_column;
  config.label_column = o.columns.class_column;
  config.target_threshold = o.columns.target_threshold;
  data::Prepared prepared = data::prepare_csv(o);
  if (prepared.data.label_names.empty()) throw std::runtime_error(o.csv + ": the data has no label columns (--labels)");
  if (model.reads_sentences) read_sentences(prepared, o.csv, o.columns, t.layout, config, threads);
  const std::shared_ptr<text::SubwordVocabulary> vocabulary =
      t.reads_subwords ? subwords_of(std::make_shared<const text::Tokenizer>(prepared.tokenizer), config) : nullptr;
  if (t.reads_subwords) read_misspelt_subwords(prepared, o.csv, o.columns, vocabulary, t.misspell.value, t.edits);
  TrainingSignals signals;
  if (t.rationales.given)
    signals.marks =
        mark_rationales(prepared, o.csv, o.columns, data::read_rationales(config.rationales, t.rationale_docs.value, "--rationale-docs"),
                        config.rationales, config);
  if (config.weighs_rows()) signals.row_weights = read_row_weights(prepared, o.csv, o.columns.format, config);
  CounterfactualTexts copies;
  if (t.counterfactual.value) {
    copies = counterfactual_texts(prepared, o.csv, o.columns, t.terms, misspelling(t.misspell.value, t.edits));
    signals.counterfactuals =
        encode_counterfactuals(copies, prepared.data.x.rows, prepared.tokenizer, config, vocabulary, prepared.pad, threads);
  }
  data::write_prepared_dir(prepared, config.dir);
  write_subword_words(prepared.data.x, config.dir);  // (the copies' new words too: one vocabulary)
  if (t.rationales.given) io::write_file_atomic(text_file_in(config.dir, "rationales.json"), marks_json(signals.marks));
  if (config.weighs_rows())
    io::write_file_atomic(text_file_in(config.dir, "row_weights.json"), nlohmann::json{{"weights", signals.row_weights}}.dump() + "\n");
  if (t.counterfactual.value) io::write_file_atomic(text_file_in(config.dir, "counterfactuals.json"), counterfactuals_json(copies));
  return text_dataset(std::move(prepared.data), std::move(prepared.tokenizer), config, {}, {}, {}, std::move(signals));
}

}  // namespace

std::unique_ptr<Dataset> open_text_data(const data::Inputs& in, const models::ModelEntry& model, const std::string& run_dir, int threads) {
  const TextTrainingInputs t = read_text_training(in, model);
  TextDataConfig config;
  if (t.reads_subwords) {
    config.subword_buckets = t.subword_buckets.value;
    config.subword_skeletons = t.skeletons.value;
  }
  if (t.rationales.given) {
    config.rationales = t.rationales.value;
    config.rationale_weight = t.rationale_weight.value;
    config.rationale_target = t.target;
  }
  config.weight_column = t.weight_column.value;  // bias-aware training
  config.identity_weighting = t.identity_weighting.value;
  config.identities = t.identities.value;
  config.aux_labels = t.aux_labels.value;
  if (t.counterfactual.value) {
    config.counterfactual_weight = t.counterfactual_weight.value;
    config.counterfactual_terms = t.counterfactual_terms.value;
  }
  std::unique_ptr<Dataset> dataset;
  if (t.data.given) {
    config.dir = fs::absolute(t.data.value).string();
    read_prepare_report(config);
    dataset = text_dataset(io::read_prepared(text_file_in(config.dir, "data.pt")),
                           read_tokenizer(text_file_in(config.dir, "tokenizer.json")), config);
  } else {
    config.dir = fs::absolute(fs::path(run_dir) / "data").string();
    dataset = prepare_training_csv(in, t, model, config, threads);
  }
  if (dataset->data_config().at("labels").empty())
    throw std::runtime_error(dataset->data_config().at("dir").get<std::string>() + ": the data has no label columns");
  return dataset;
}

std::unique_ptr<Dataset> reopen_text_data(const nlohmann::json& data_config, const std::string& run_dir, int threads) {
  const auto config = parse_data_config<TextDataConfig>(data_config, text_file_in(run_dir, "config.json"));
  io::PreparedData data = io::read_prepared(text_file_in(config.dir, "data.pt"));
  text::Tokenizer tokenizer = read_tokenizer(text_file_in(run_dir, "tokenizer.json"));
  const std::shared_ptr<text::SubwordVocabulary> vocabulary = reopen_subwords(tokenizer, config);
  data.x.subwords = vocabulary;
  TrainingSignals signals;
  if (config.rationale_weight > 0) signals.marks = read_marks(text_file_in(config.dir, "rationales.json"), data.x.rows);
  if (config.weighs_rows()) signals.row_weights = read_row_weights_file(text_file_in(config.dir, "row_weights.json"), data.x.rows);
  if (config.counterfactual_weight > 0)
    signals.counterfactuals = encode_counterfactuals(read_counterfactuals(text_file_in(config.dir, "counterfactuals.json"), data.x.rows),
                                                     data.x.rows, tokenizer, config, vocabulary, pad_of(config), threads);
  return text_dataset(std::move(data), std::move(tokenizer), config, {}, {}, {}, std::move(signals));
}

std::unique_ptr<Dataset> open_text_validation(const std::string& csv, const Dataset& training, const std::string& run_dir, int threads) {
  const auto& train = dynamic_cast<const TextDataset&>(training);
  TextDataConfig config = train.config();
  config.rationales.clear();  // held-out rows: no rationale term, unweighted
  config.rationale_weight = 0;
  config.weight_column.clear();
  config.identity_weighting = false;
  config.counterfactual_weight = 0;
  config.counterfactual_terms.clear();
  data::PrepareOptions o;
  o.csv = csv;
  o.columns.text_column = config.text_column;
  o.columns.id_column = config.id_column;
  set_label_columns(o.columns, config);
  o.apply_loaded_tokenizer = &train.tokenizer();  // read as the training rows were
  o.pad.maxlen = config.maxlen;
  o.pad.padding = config.padding;
  o.pad.truncating = config.truncating;
  o.threads = threads;
  data::Prepared prepared = data::prepare_csv(o);
  if (config.sentences.enabled()) read_sentences(prepared, csv, o.columns, config.sentences, config, threads);
  if (config.subword_buckets > 0)
    read_subwords(prepared, csv, o.columns, subwords_of(std::make_shared<const text::Tokenizer>(train.tokenizer()), config));
  config.dir = fs::absolute(fs::path(run_dir) / "data" / "validation").string();
  data::write_prepared_dir(prepared, config.dir);
  write_subword_words(prepared.data.x, config.dir);
  return text_dataset(std::move(prepared.data), train.tokenizer(), config);
}

}  // namespace attn::tasks
