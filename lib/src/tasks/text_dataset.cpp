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
#include "attn/nn/script_module.h"
#include "attn/tasks/bias.h"
#include "attn/text/csv.h"
#include "attn/text/dataset.h"
#include "attn/text/perturb.h"
#include "task_support.h"
#include "text_explanation.h"

namespace attn::tasks {
namespace {

namespace fs = std::filesystem;

std::string text_file_in(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

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
              RationaleMarks marks, IdentityColumns identities, std::vector<float> row_weights)
      : thresholds_(std::move(thresholds)),
        kind_(config.one_class_per_row() ? LabelKind::kOneClass : LabelKind::kIndependent),
        data_(std::move(data)),
        tokenizer_(std::move(tokenizer)),
        config_(std::move(config)),
        scored_(std::move(scored)),
        marks_(std::move(marks)),
        identities_(std::move(identities)),
        row_weights_(std::move(row_weights)) {
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
    return b;
  }

  Loss loss(torch::jit::Module& model, const Batch& b, const torch::Tensor& weights) const override {
    // An ensemble's members each learn by their own loss (models/ensemble.h): the loss is their mean.
    const std::vector<models::Scored> outs = models::TextClassifier(model).member_logits(b.inputs.at(0).toTensor());
    Loss total;
    for (const models::Scored& out : outs) {
      Loss loss = kind_ == LabelKind::kOneClass ? class_loss(out.scores, b.targets, weights, b.row_weights)
                                                : binary_loss(out.scores, b.targets, weights, b.row_weights);
      if (b.attention_targets.defined())
        loss.value = loss.value + config_.rationale_weight * rationale_loss(out.attention, b.attention_targets);
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

  LogitAdjustment macro_f1_offsets(torch::jit::Module& model, const std::vector<std::int64_t>& rows) const override {
    if (kind_ != LabelKind::kOneClass || !labels_.defined() || rows.empty()) return {};
    const std::vector<float> probs = predict_texts(model, data_.x, data_.padding, rows, kScoringBatchSize);
    return tasks::macro_f1_offsets(probs, labels_of(rows), config_.labels.size());
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

  nlohmann::json data_config() const override { return config_; }

  models::DataSizes sizes() const override {
    const auto& to = tokenizer_.options();
    models::DataSizes s;
    s.vocabulary = to.num_words && *to.num_words ? *to.num_words : tokenizer_.vocabulary_size() + 2;
    s.labels = static_cast<std::int64_t>(config_.labels.size());
    s.one_class_per_row = kind_ == LabelKind::kOneClass;
    s.input_length = data_.x.cols;
    s.subword_buckets = config_.subword_buckets;
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
  torch::Tensor labels_;

  /// Jigsaw 2019's bias metric of the identity columns over the scored rows (metrics["bias"]), and
  /// --bias-html's page.
  void add_bias(const std::vector<std::int64_t>& rows, const std::vector<float>& probs, Evaluation& out) const {
    const std::size_t L = config_.labels.size(), k = identities_.label;
    std::vector<float> scores;
    std::vector<std::uint8_t> positive;
    std::vector<std::vector<float>> annotations(identities_.names.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<std::size_t>(rows[i]);
      if (!scored_.empty() && !scored_[r]) continue;
      scores.push_back(probs[i * L + k]);
      positive.push_back(data_.labels[r * L + k] > 0.5f);
      for (std::size_t a = 0; a < annotations.size(); ++a) annotations[a].push_back(identities_.values[a][r]);
    }
    const std::string& label = config_.labels[k];
    try {
      const BiasFigures f = bias_figures(scores, positive, identities_.names, annotations);
      out.metrics["bias"] = to_json(f, label);
      if (!identities_.html.empty()) out.files.emplace_back(identities_.html, bias_heatmap_html(f, label));
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

std::shared_ptr<text::SubwordVocabulary> subwords_of(const std::shared_ptr<const text::Tokenizer>& tok, const TextDataConfig& config) {
  if (config.subword_buckets == 0) return nullptr;
  return std::make_shared<text::SubwordVocabulary>(tok, config.subword_buckets);
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

namespace {

/// The texts of `csv` read again (its text column, in its format; rewritten as the prepared rows
/// were), for a second pass over rows already prepared: a hierarchical model's sentences, subword ids.
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

}  // namespace

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

std::vector<std::pair<std::int32_t, float>> attention_target(const MarkedSpans& spans, RationaleTarget target) {
  std::size_t tokens = 0, used = 0;
  for (const std::vector<std::int32_t>& span : spans) tokens += span.size(), used += span.empty() ? 0 : 1;
  std::vector<std::pair<std::int32_t, float>> out;
  for (const std::vector<std::int32_t>& span : spans)
    for (std::int32_t t : span)
      out.emplace_back(
          t, target == RationaleTarget::kWords ? 1.0f / static_cast<float>(tokens) : 1.0f / static_cast<float>(used * span.size()));
  return out;
}

RationaleMarks mark_rationales(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                               const std::vector<data::RationaleRow>& rationales, const std::string& file, TextDataConfig config) {
  config.maxlen = prepared.data.x.cols;  // the rows as prepared (a new run's config learns its width from them later)
  const std::vector<std::string> texts = texts_again(prepared, csv, columns, nullptr);
  std::unordered_map<std::string_view, std::size_t> by_text;  // the first rationale of each text
  for (std::size_t i = 0; i < rationales.size(); ++i) by_text.emplace(rationales[i].text, i);
  std::vector<std::int64_t> rows;  // the training rows with a rationale, and which
  std::vector<std::size_t> which;
  for (std::size_t r = 0; r < texts.size(); ++r)
    if (const auto it = by_text.find(texts[r]); it != by_text.end()) {
      rows.push_back(static_cast<std::int64_t>(r));
      which.push_back(it->second);
    }
  if (rows.empty())
    throw std::invalid_argument("--rationales: no text of " + file + " is a text of " + csv +
                                " (a rationale applies to the training rows whose text is its text, byte for byte)");
  const text::Tokenizer& tok = prepared.tokenizer;
  std::vector<std::string> matched;  // the rows' token counts before the maxlen cut (word-level models)
  for (std::int64_t r : rows) matched.push_back(texts[static_cast<std::size_t>(r)]);
  std::vector<std::size_t> all(rows.size(), 0);
  if (!config.sentences.enabled()) {
    const std::vector<text::Sequence> seqs = config.subword_buckets > 0 ? std::vector<text::Sequence>() : tok.texts_to_sequences(matched);
    for (std::size_t i = 0; i < rows.size(); ++i) all[i] = config.subword_buckets > 0 ? tok.tokenize(matched[i]).size() : seqs[i].size();
  }
  RationaleMarks marks(texts.size());
  std::vector<bool> used(rationales.size(), false);
  std::int64_t marked_words = 0, not_read = 0, with_marks = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const data::RationaleRow& q = rationales[which[i]];
    used[which[i]] = true;
    const auto r = static_cast<std::size_t>(rows[i]);
    const auto read = static_cast<std::size_t>(prepared.data.x.lengths[r]);
    if (!config.sentences.enabled() && read != std::min(all[i], static_cast<std::size_t>(config.maxlen)))
      throw std::logic_error(csv + ": row " + std::to_string(r + 1) + " read again does not give its prepared tokens");
    const std::vector<report::WordWeight> words = words_of(tok, config, matched[i], read, all[i]);
    std::vector<std::size_t> span_of(q.words.size(), 0);  // a marked word's span
    for (std::size_t s = 0; s < q.spans.size(); ++s)
      for (auto k = q.spans[s].first; k < q.spans[s].second; ++k) span_of[static_cast<std::size_t>(k)] = s;
    MarkedSpans mine(q.spans.size());
    std::size_t w = 0;  // the row's words are the rationale's non-empty words
    for (std::size_t k = 0; k < q.words.size(); ++k) {
      if (q.words[k].empty()) continue;
      if (w >= words.size() || words[w].word != q.words[k])
        throw std::runtime_error(file + ":" + std::to_string(q.line) + ": the rationale's words do not line up with the words of " + csv +
                                 "'s row " + std::to_string(r + 1) + " at word " + std::to_string(k) + " ('" + q.words[k] +
                                 "'; a tab or newline inside a word?)");
      if (q.marked[k]) {
        ++marked_words;
        if (words[w].count == 0) ++not_read;
        for (std::size_t t = 0; t < words[w].count; ++t) mine[span_of[k]].push_back(static_cast<std::int32_t>(words[w].first + t));
      }
      ++w;
    }
    if (w != words.size())
      throw std::runtime_error(file + ":" + std::to_string(q.line) + ": the rationale has " + std::to_string(w) + " words, " + csv +
                               "'s row " + std::to_string(r + 1) + " " + std::to_string(words.size()));
    mine.erase(std::remove_if(mine.begin(), mine.end(), [](const std::vector<std::int32_t>& s) { return s.empty(); }), mine.end());
    with_marks += mine.empty() ? 0 : 1;
    marks[r] = std::move(mine);
  }
  prepared.report["rationales"] = {{"file", file},
                                   {"rationales", rationales.size()},
                                   {"rows", rows.size()},
                                   {"rows_trained", with_marks},
                                   {"rationales_unused", std::count(used.begin(), used.end(), false)},
                                   {"marked_words", marked_words},
                                   {"marked_words_not_read", not_read}};
  return marks;
}

namespace {

/// rationales.json: {"rows": [[row, [[a span's entries...], ...]], ...]} for the rows with marks.
std::string marks_json(const RationaleMarks& marks) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t r = 0; r < marks.size(); ++r)
    if (!marks[r].empty()) rows.push_back({r, marks[r]});
  return nlohmann::json{{"rows", rows}}.dump() + "\n";
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

RationaleMarks read_marks(const std::string& path, std::int64_t rows) {
  RationaleMarks marks(static_cast<std::size_t>(rows));
  try {
    const nlohmann::json file = nlohmann::json::parse(io::read_file(path));  // (kept alive: the loop reads into it)
    for (const auto& row : file.at("rows")) {
      const auto r = row.at(0).get<std::int64_t>();
      if (r < 0 || r >= rows) throw std::runtime_error("row " + std::to_string(r) + " is not one of the data's " + std::to_string(rows));
      const nlohmann::json& spans = row.at(1);
      if (!spans.empty() && spans[0].is_number())  // written before spans were kept: one span, as a word target reads it
        marks[static_cast<std::size_t>(r)] = {spans.get<std::vector<std::int32_t>>()};
      else
        marks[static_cast<std::size_t>(r)] = spans.get<MarkedSpans>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not the marks of rationales: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return marks;
}

}  // namespace

IdentityColumns read_identities(const std::string& csv, const std::vector<std::string>& names, text::TableFormat format) {
  text::CsvReader reader(csv, format);
  IdentityColumns out;
  std::vector<std::size_t> columns;
  if (names.empty()) {
    for (const std::string& name : scored_identities())
      if (const auto c = reader.find_column(name)) out.names.push_back(name), columns.push_back(*c);
  } else {
    for (const std::string& name : names) {
      if (std::find(out.names.begin(), out.names.end(), name) != out.names.end())
        throw std::invalid_argument("--identities: '" + name + "' is named twice");
      out.names.push_back(name);
      columns.push_back(reader.column(name));  // a missing column: an error listing the file's
    }
  }
  out.values.resize(out.names.size());
  if (out.names.empty()) return out;
  text::CsvRecord record;
  while (reader.next(record)) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& v = record.fields[columns[i]];
      float x = std::numeric_limits<float>::quiet_NaN();
      if (!v.empty() && v != "nan" && v != "NaN" && v != "null") {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (*end != '\0' || !(d >= 0 && d <= 1))
          throw std::runtime_error(csv + ":" + std::to_string(record.line) + ": column " + std::to_string(columns[i] + 1) + " (" +
                                   out.names[i] + "): an identity must be a number in [0, 1] or empty, got '" + v + "'");
        x = static_cast<float>(d);
      }
      out.values[i].push_back(x);
    }
  }
  return out;
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

namespace {

/// A number in a column of `csv`, or an error naming its file, line and column.
double weight_value(const std::string& v, const std::string& csv, const text::CsvRecord& record, std::size_t column,
                    const std::string& name) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= 0) || !std::isfinite(d))
    throw std::runtime_error(csv + ":" + std::to_string(record.line) + ": column " + std::to_string(column + 1) + " (" + name +
                             "): a weight must be a number >= 0, got '" + v + "'");
  return d;
}

/// Bias-aware training: the prepared rows' weights in the loss from `csv` (--weight-column's
/// numbers times, with --identity-weighting, tasks/bias.h's identity weights over the identity
/// columns, the first label's positives), scaled to mean 1; recorded in prepare.json's
/// "row_weights", and the identity columns used in `config`.
std::vector<float> read_row_weights(data::Prepared& prepared, const std::string& csv, text::TableFormat format, TextDataConfig& config) {
  const auto n = static_cast<std::size_t>(prepared.data.x.rows);
  std::vector<double> w(n, 1.0);
  nlohmann::json report = nlohmann::json::object();
  if (!config.weight_column.empty()) {
    text::CsvReader reader(csv, format);
    const std::size_t c = reader.column(config.weight_column);  // a missing column: an error listing the file's
    text::CsvRecord record;
    std::size_t r = 0;
    for (; reader.next(record); ++r)
      if (r < n) w[r] *= weight_value(record.fields[c], csv, record, c, config.weight_column);
    if (r != n) throw std::logic_error(csv + ": " + std::to_string(r) + " weights read, " + std::to_string(n) + " rows prepared");
    report["column"] = config.weight_column;
  }
  if (config.identity_weighting) {
    const IdentityColumns id = read_identities(csv, config.identities, format);
    if (id.names.empty())
      throw std::invalid_argument("--identity-weighting: " + csv +
                                  " has none of the 2019 competition's scored identity columns (--identities names them)");
    config.identities = id.names;
    const std::size_t L = prepared.data.label_names.size();
    std::vector<std::uint8_t> positive(n);
    for (std::size_t r = 0; r < n; ++r) positive[r] = prepared.data.labels[r * L] > 0.5f;
    const std::vector<float> iw = identity_weights(positive, id.values);
    std::int64_t counts[4] = {0, 0, 0, 0};  // background negatives and positives, subgroup positives and negatives
    for (std::size_t r = 0; r < n; ++r) {
      w[r] *= iw[r];
      bool in = false;
      for (const auto& v : id.values) in = in || v[r] >= 0.5f;
      ++counts[(in ? 2 : 0) + (in ? !positive[r] : positive[r])];
    }
    report["identity_weighting"] = {{"identities", id.names},
                                    {"label", prepared.data.label_names.front()},
                                    {"background_negatives", counts[0]},
                                    {"background_positives", counts[1]},
                                    {"subgroup_positives", counts[2]},
                                    {"subgroup_negatives", counts[3]}};
  }
  double sum = 0;
  for (double v : w) sum += v;
  if (!(sum > 0)) throw std::invalid_argument(csv + ": every row's weight is 0 (--weight-column " + config.weight_column + ")");
  const double scale = static_cast<double>(n) / sum;
  std::vector<float> out(n);
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (std::size_t r = 0; r < n; ++r) {
    out[r] = static_cast<float>(w[r] * scale);
    lo = std::min(lo, w[r] * scale), hi = std::max(hi, w[r] * scale);
  }
  report["scaled_to_mean_1"] = {{"min", lo}, {"max", hi}};
  prepared.report["row_weights"] = report;
  return out;
}

std::vector<float> read_row_weights_file(const std::string& path, std::int64_t rows) {
  std::vector<float> w;
  try {
    w = nlohmann::json::parse(io::read_file(path)).at("weights").get<std::vector<float>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not the rows' weights: " + e.what());
  }
  if (static_cast<std::int64_t>(w.size()) != rows)
    throw std::runtime_error(path + ": " + std::to_string(w.size()) + " weights for the data's " + std::to_string(rows) + " rows");
  return w;
}

}  // namespace

std::unique_ptr<Dataset> text_dataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config, std::vector<bool> scored,
                                      Thresholds thresholds, RationaleMarks marks, IdentityColumns identities,
                                      std::vector<float> row_weights) {
  return std::make_unique<TextDataset>(std::move(data), std::move(tokenizer), std::move(config), std::move(scored), std::move(thresholds),
                                       std::move(marks), std::move(identities), std::move(row_weights));
}

bool reads_one_class_per_row(const data::Inputs& in) {
  if (in.given("label-column")) return true;
  if (!in.given("data")) return false;
  TextDataConfig config;
  config.dir = in.text("data");
  read_prepare_report(config);
  return config.one_class_per_row();
}

std::unique_ptr<Dataset> open_text_data(const data::Inputs& in, const models::ModelEntry& model, const std::string& run_dir, int threads) {
  TextDataConfig config;
  std::unique_ptr<Dataset> dataset;
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
  const bool has_table =
      std::any_of(model.keys.begin(), model.keys.end(), [](const models::ConfigKey& k) { return k.name == "subword_buckets"; });
  if (in.flag("subwords") && in.flag("word-only")) throw std::invalid_argument("give one of --subwords and --word-only");
  // One class per row (the public corpora: HateXplain, Davidson, OLID) reads subwords by default when
  // the model has their table and the texts are read here: docs/benchmarks.md#real-data-hatexplain.
  const bool subwords = in.flag("subwords") || (!in.flag("word-only") && has_table && !in.given("data") && in.given("label-column"));
  if (in.given("subword-buckets") && !subwords) throw std::invalid_argument("--subword-buckets applies with --subwords");
  if (subwords) {
    if (!has_table) throw std::invalid_argument("--subwords: " + model.name + " has no subword embedding (it reads whole words)");
    if (in.given("data")) throw std::invalid_argument("--subwords re-reads the texts: give the CSV (--csv), not --data");
    config.subword_buckets = in.integer("subword-buckets");
    if (config.subword_buckets < 1 || config.subword_buckets > (std::int64_t{1} << 30))
      throw std::invalid_argument("--subword-buckets must be in 1..1073741824, got " + std::to_string(config.subword_buckets));
  }
  // --misspell: the training texts' words misspelt on purpose, read again by their subwords.
  const double misspell = in.given("misspell") ? in.number("misspell") : 0;
  if (!(misspell >= 0 && misspell <= 1)) throw std::invalid_argument("--misspell must be in 0..1, got '" + in.text("misspell") + "'");
  if (in.given("misspell-edits") && misspell == 0) throw std::invalid_argument("--misspell-edits applies with --misspell");
  if (misspell > 0 && !subwords)
    throw std::invalid_argument(
        "--misspell applies to a model reading subwords (--subwords; the default with --label-column): "
        "a word-only model drops misspelt words");
  if (misspell > 0 && in.given("rationales")) throw std::invalid_argument("give one of --misspell and --rationales");
  std::vector<text::Perturbation> edits;
  for (const std::string& name : in.given("misspell-edits") ? in.list("misspell-edits") : std::vector<std::string>())
    edits.push_back(text::parse_perturbation(name, "--misspell-edits"));
  if (edits.empty())
    for (const text::PerturbationInfo& p : text::perturbations()) edits.push_back(p.perturbation);
  const bool rationales = in.given("rationales");
  for (const char* flag : {"rationale-docs", "rationale-weight", "rationale-target"})
    if (in.given(flag) && !rationales) throw std::invalid_argument(std::string("--") + flag + " applies with --rationales");
  if (rationales) {
    if (in.given("data")) throw std::invalid_argument("--rationales re-reads the texts: give the CSV (--csv), not --data");
    config.rationales = in.text("rationales");
    config.rationale_weight = in.number("rationale-weight");
    if (config.rationale_weight < 0)
      throw std::invalid_argument("--rationale-weight: '" + in.text("rationale-weight") + "' is not a number >= 0");
    const std::string target = in.text("rationale-target");
    if (target != "words" && target != "spans") throw std::invalid_argument("--rationale-target: '" + target + "' is not words or spans");
    config.rationale_target = target == "spans" ? RationaleTarget::kSpans : RationaleTarget::kWords;
  }
  // Bias-aware training.
  if (in.given("identities") && !in.flag("identity-weighting"))
    throw std::invalid_argument("--identities applies with --identity-weighting");
  config.weight_column = in.get("weight-column").value_or("");
  config.identity_weighting = in.flag("identity-weighting");
  if (in.given("identities")) {
    config.identities = in.list("identities");
    if (config.identities.empty()) throw std::invalid_argument("--identities: no column named");
  }
  if (in.given("aux-labels")) config.aux_labels = in.list("aux-labels");
  for (const char* flag : {"weight-column", "identity-weighting", "aux-labels"})
    if (in.given(flag) && in.given("data"))
      throw std::invalid_argument(std::string("--") + flag + " reads columns of the CSV: give the CSV (--csv), not --data");
  if (in.given("data")) {
    if (model.reads_sentences) throw std::invalid_argument("--data: " + model.name + " reads the texts' sentences; give the CSV (--csv)");
    if (in.given("csv")) throw std::invalid_argument("give one of --csv and --data");
    for (const data::InputSpec& s : data::prepare_inputs())
      if (in.given(s.name)) throw std::invalid_argument("--" + s.name + " prepares a --csv; the data in --data was prepared already");
    config.dir = fs::absolute(in.text("data")).string();
    read_prepare_report(config);
    dataset = text_dataset(io::read_prepared(text_file_in(config.dir, "data.pt")),
                           read_tokenizer(text_file_in(config.dir, "tokenizer.json")), config);
  } else {
    data::PrepareOptions o = data::prepare_options(in, threads);
    if (!config.aux_labels.empty() && !o.columns.class_column.empty())
      throw std::invalid_argument("--aux-labels adds 0/1 label columns; this model reads one class per row (--label-column)");
    if (config.identity_weighting && !o.columns.class_column.empty())
      throw std::invalid_argument(
          "--identity-weighting weighs the first 0/1 label's positives; this model reads one class per row (--label-column)");
    for (const std::string& aux : config.aux_labels) {
      if (std::count(o.columns.label_columns.begin(), o.columns.label_columns.end(), aux))
        throw std::invalid_argument(
            "--aux-labels: '" + aux + "' is " +
            (std::count(config.aux_labels.begin(), config.aux_labels.end(), aux) > 1 ? "named twice" : "one of --labels"));
      o.columns.label_columns.push_back(aux);
    }
    config.dir = fs::absolute(fs::path(run_dir) / "data").string();
    config.truncating = o.pad.truncating;
    config.text_column = o.columns.text_column;
    config.id_column = o.columns.id_column;
    config.label_column = o.columns.class_column;
    config.target_threshold = o.columns.target_threshold;
    data::Prepared prepared = data::prepare_csv(o);
    if (prepared.data.label_names.empty()) throw std::runtime_error(o.csv + ": the data has no label columns (--labels)");
    if (model.reads_sentences) read_sentences(prepared, o.csv, o.columns, layout, config, threads);
    if (subwords) {
      std::int64_t texts_changed = 0, words_changed = 0, words = 0;
      const text::PerturbOptions po{misspell, 1, {}};
      const auto misspelt = [&](const std::string& t, std::int64_t row) {
        text::PerturbedText out = text::misspell(t, edits, po, static_cast<std::uint64_t>(row));
        texts_changed += out.changed > 0;
        words_changed += out.changed;
        words += out.targets;
        return std::move(out.text);
      };
      read_subwords(prepared, o.csv, o.columns, subwords_of(std::make_shared<const text::Tokenizer>(prepared.tokenizer), config),
                    misspell > 0 ? TrainedModel::TextRewrite(misspelt) : nullptr);
      if (misspell > 0) {
        nlohmann::json names = nlohmann::json::array();
        for (const text::Perturbation p : edits) names.push_back(text::perturbation_name(p));
        prepared.report["misspelt"] = {{"rate", misspell},
                                       {"edits", names},
                                       {"words_of_4_letters", words},
                                       {"words_changed", words_changed},
                                       {"texts_changed", texts_changed}};
      }
    }
    RationaleMarks marks;
    if (rationales) {
      const auto given = in.get("rationale-docs");
      marks = mark_rationales(prepared, o.csv, o.columns, data::read_rationales(config.rationales, given.value_or(""), "--rationale-docs"),
                              config.rationales, config);
    }
    std::vector<float> weights;
    if (config.weighs_rows()) weights = read_row_weights(prepared, o.csv, o.columns.format, config);
    data::write_prepared_dir(prepared, config.dir);
    write_subword_words(prepared.data.x, config.dir);
    if (rationales) io::write_file_atomic(text_file_in(config.dir, "rationales.json"), marks_json(marks));
    if (config.weighs_rows())
      io::write_file_atomic(text_file_in(config.dir, "row_weights.json"), nlohmann::json{{"weights", weights}}.dump() + "\n");
    dataset =
        text_dataset(std::move(prepared.data), std::move(prepared.tokenizer), config, {}, {}, std::move(marks), {}, std::move(weights));
  }
  if (dataset->data_config().at("labels").empty()) throw std::runtime_error(config.dir + ": the data has no label columns");
  return dataset;
}

std::unique_ptr<Dataset> reopen_text_data(const nlohmann::json& data_config, const std::string& run_dir) {
  const auto config = parse_data_config<TextDataConfig>(data_config, text_file_in(run_dir, "config.json"));
  io::PreparedData data = io::read_prepared(text_file_in(config.dir, "data.pt"));
  text::Tokenizer tokenizer = read_tokenizer(text_file_in(run_dir, "tokenizer.json"));
  data.x.subwords = reopen_subwords(tokenizer, config);
  RationaleMarks marks;
  if (config.rationale_weight > 0) marks = read_marks(text_file_in(config.dir, "rationales.json"), data.x.rows);
  std::vector<float> weights;
  if (config.weighs_rows()) weights = read_row_weights_file(text_file_in(config.dir, "row_weights.json"), data.x.rows);
  return text_dataset(std::move(data), std::move(tokenizer), config, {}, {}, std::move(marks), {}, std::move(weights));
}

std::unique_ptr<Dataset> open_text_validation(const std::string& csv, const Dataset& training, const std::string& run_dir, int threads) {
  const auto& train = dynamic_cast<const TextDataset&>(training);
  TextDataConfig config = train.config();
  config.rationales.clear();  // held-out rows: no rationale term, unweighted
  config.rationale_weight = 0;
  config.weight_column.clear();
  config.identity_weighting = false;
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
