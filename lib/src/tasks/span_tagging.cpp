// Span tagging: everything attn knows about span taggers' data (see span_tagging.h and task.h).
#include "attn/tasks/span_tagging.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <torch/script.h>

#include "attn/data/tables.h"
#include "attn/metrics/spans.h"
#include "attn/nn/script_module.h"
#include "attn/report/span_explanation.h"
#include "attn/report/word_alignment.h"
#include "attn/text/char_spans.h"
#include "attn/text/csv.h"
#include "task_support.h"
#include "text_dataset.h"

namespace attn::tasks {
namespace {

namespace fs = std::filesystem;

/// A CRF tagger learns by each text's tag likelihood, which no token's weight enters.
const char* const kCrfWeights = "--pos-weight: weighs the tokens of a tagger without a CRF (--set crf=false)";

/// How a span tagger cuts and pads its texts, as the text classifiers' helpers read it: post
/// padding (a row's tokens start at column 0, its words' entries are their columns) and a long
/// text's end cut.
TextDataConfig layout_of(const SpanDataConfig& c) {
  TextDataConfig t;
  t.maxlen = c.maxlen;
  t.padding = t.truncating = text::Side::kPost;
  t.subword_buckets = c.subword_buckets;
  return t;
}

/// Texts as a span tagger reads them: their ids (post-padded, with subwords) and each text's words
/// aligned to its ids (report/word_alignment.h: a word's tokens are entries first .. first + count).
struct ReadTexts {
  std::vector<std::string> texts;
  text::PaddedSequences x;
  std::vector<std::vector<report::WordWeight>> words;
};

ReadTexts read_texts(std::vector<std::string> texts, const std::shared_ptr<const text::Tokenizer>& tok, const SpanDataConfig& config) {
  ReadTexts r;
  const TextDataConfig layout = layout_of(config);
  std::vector<text::Sequence> all;  // every token of each text, before the maxlen cut
  r.x = pad_texts(tok, layout, texts, &all);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    r.words.push_back(report::words_of(*tok, token_layout(layout), texts[i], static_cast<std::size_t>(r.x.lengths[i]), all[i].size()));
    if (r.words.back().size() != text::word_ranges(texts[i]).size())
      throw std::logic_error("span tagging: text " + std::to_string(i + 1) + "'s words do not line up with its character words");
  }
  r.texts = std::move(texts);
  return r;
}

/// A word's probability: its read tokens' highest (0 when none is read).
double word_probability(const report::WordWeight& w, const float* p) {
  double best = 0;
  for (std::size_t t = 0; t < w.count; ++t) best = std::max(best, static_cast<double>(p[w.first + t]));
  return best;
}

/// The characters a text's words at or above `threshold` cover (p: its tokens' probabilities).
std::vector<std::int64_t> marked_offsets(const std::string& text, const std::vector<report::WordWeight>& words, const float* p,
                                         double threshold) {
  std::vector<bool> chosen(words.size(), false);
  for (std::size_t w = 0; w < words.size(); ++w) chosen[w] = words[w].count > 0 && word_probability(words[w], p) >= threshold;
  return text::chosen_word_offsets(text, chosen);
}

/// Each token's probability of `rows` of `x`, `x.cols` floats per row (0 beyond its tokens), in
/// length-bucketed batches.
std::vector<float> token_probabilities(torch::jit::Module& module, const text::PaddedSequences& x, const std::vector<std::int64_t>& rows,
                                       std::int64_t batch_size) {
  nn::EvalModeGuard eval(module);
  torch::NoGradGuard no_grad;
  models::SpanTagger tagger(module);
  const std::int64_t width = x.cols;
  std::vector<float> out(rows.size() * static_cast<std::size_t>(width), 0.0f);
  for_each_bucket_at_once(rows, x.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor p =
        tagger.forward(model_ids(x, batch_ids(x, batch, Width::kLongestRow, text::Side::kPost))).to(torch::kFloat32).contiguous();
    const std::int64_t w = p.size(1);
    for (std::size_t i = 0; i < batch.size(); ++i)
      std::copy(p.data_ptr<float>() + static_cast<std::int64_t>(i) * w, p.data_ptr<float>() + static_cast<std::int64_t>(i + 1) * w,
                out.begin() + static_cast<std::ptrdiff_t>(at[i] * static_cast<std::size_t>(width)));
  });
  return out;
}

/// Each text's miss of the soft F1 of its marked tokens [B] (logits, targets and the real tokens'
/// mask `real` [B, T]): 1 - 2 sum_t p_t y_t / (sum_t p_t + sum_t y_t), p_t = sigmoid(logit_t), the
/// task's F1 with each token's probability in place of its decision (a Dice loss, Milletari et al.
/// 2016); 0 for a text nobody marked. Tokens stand for their words' characters: the task scores
/// characters, a tagger decides words.
torch::Tensor soft_f1_misses(const torch::Tensor& logits, const torch::Tensor& targets, const torch::Tensor& real) {
  const torch::Tensor p = torch::sigmoid(logits) * real, y = targets * real;
  const torch::Tensor marked = y.sum(1);
  const torch::Tensor f1 = 2 * (p * y).sum(1) / (p.sum(1) + marked).clamp_min(1e-6);
  return (1 - f1) * (marked > 0).to(f1.dtype());
}

/// Thresholds a learned one is chosen from: 0.05, 0.10, ..., 0.95.
std::vector<double> threshold_grid() {
  std::vector<double> out;
  for (int k = 1; k <= 19; ++k) out.push_back(k * 0.05);
  return out;
}

class SpanDataset : public Dataset {
 public:
  SpanDataset(ReadTexts texts, std::optional<std::vector<std::vector<std::int64_t>>> marked, std::vector<std::string> ids,
              std::shared_ptr<const text::Tokenizer> tok, SpanDataConfig config)
      : read_(std::move(texts)), marked_(std::move(marked)), ids_(std::move(ids)), tok_(std::move(tok)), config_(std::move(config)) {
    config_.rows = read_.x.rows;
    if (!marked_) return;
    targets_.assign(static_cast<std::size_t>(read_.x.rows * read_.x.cols), 0.0f);
    for (std::size_t r = 0; r < read_.texts.size(); ++r) {
      const std::vector<bool> touched = text::words_touched(read_.texts[r], (*marked_)[r]);
      for (std::size_t w = 0; w < touched.size(); ++w)
        for (std::size_t t = 0; touched[w] && t < read_.words[r][w].count; ++t)
          targets_[r * static_cast<std::size_t>(read_.x.cols) + read_.words[r][w].first + t] = 1.0f;
    }
  }

  std::int64_t rows() const override { return read_.x.rows; }
  const std::vector<std::int64_t>& lengths() const override { return read_.x.lengths; }

  Batch batch(const std::vector<std::int64_t>& rows, Width width) const override {
    Batch b;
    const torch::Tensor ids = batch_ids(read_.x, rows, width, text::Side::kPost);
    b.tokens = ids.numel();
    b.inputs = {model_ids(read_.x, ids)};
    if (targets_.empty()) return b;
    const std::int64_t w = ids.size(1);
    b.targets = torch::zeros({static_cast<std::int64_t>(rows.size()), w}, torch::kFloat32);
    float* y = b.targets.data_ptr<float>();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const float* row = targets_.data() + rows[i] * read_.x.cols;
      std::copy(row, row + std::min(w, read_.x.cols), y + static_cast<std::int64_t>(i) * w);
    }
    return b;
  }

  /// The loss's two weights: {a marked token's weight, the soft F1's weight}.
  /// --pos-weight: the weight of a marked token's term in the loss, "auto" (the unmarked tokens of
  /// `rows` per marked one) or a positive number (none: 1); --span-f1-loss: the soft F1's; --class-weight does not apply.
  torch::Tensor loss_weights(const LossWeights& spec, const std::vector<std::int64_t>& rows) const override {
    if (!spec.classes.empty()) throw std::invalid_argument("--class-weight is for one class per row; a span tagger takes --pos-weight");
    if (!(spec.span_f1 >= 0) || !std::isfinite(spec.span_f1))
      throw std::invalid_argument("--span-f1-loss must be a number >= 0, got " + std::to_string(spec.span_f1));
    double w = 1;
    if (spec.positive == "auto") {
      double marked = 0, tokens = 0;
      for (std::int64_t r : rows)
        for (std::int64_t t = 0; t < read_.x.lengths[static_cast<std::size_t>(r)]; ++t, ++tokens) marked += targets_[r * read_.x.cols + t];
      w = marked > 0 ? (tokens - marked) / marked : 1.0;
    } else if (!spec.positive.empty()) {
      char* end = nullptr;
      w = std::strtod(spec.positive.c_str(), &end);
      if (end == spec.positive.c_str() || *end != '\0' || !(w > 0) || !std::isfinite(w))
        throw std::invalid_argument("--pos-weight: a span tagger takes auto or one positive number, got '" + spec.positive + "'");
    }
    return torch::tensor({static_cast<float>(w), static_cast<float>(spec.span_f1)});
  }

  /// The tokens' loss plus each text's soft F1 miss (soft_f1_misses) weighed by its tokens, over
  /// the batch's tokens (N):
  ///   (sum_i sum_t loss_it + span_f1 x sum_i n_i (1 - F1_i)) / N
  /// where the tokens' loss is the binary cross-entropy of each real token (padding left out; a
  /// marked token's term x --pos-weight), or with a CRF each text's -log p(its tags) (which no token
  /// weight enters), and F1_i comes from the token probabilities (a CRF's marginals). Weighing a
  /// text by its tokens keeps the loss a mean over tokens (share_of_loss); batches are bucketed by
  /// length, so within one each text weighs about the same, as in the task's mean over posts.
  /// Also the tokens' accuracy, (logit > 0) == target. Undefined `weights`: {1, 0}.
  Loss loss(torch::jit::Module& model, const Batch& b, const torch::Tensor& weights) const override {
    const torch::Tensor ids = b.inputs.at(0).toTensor();
    const torch::Tensor real = (ids.dim() == 3 ? (ids != 0).sum(2) != 0 : ids != 0).to(torch::kFloat32);
    const torch::Tensor tokens = real.sum().clamp_min(1.0);
    const double marked_weight = weights.defined() ? weights[0].item<double>() : 1.0;
    const double f1_weight = weights.defined() ? weights[1].item<double>() : 0.0;
    // An ensemble's members each learn by their own loss (models/ensemble.h): the loss is their mean.
    models::SpanTagger tagger(model);
    const bool crf = tagger.is_crf();
    if (crf && marked_weight != 1.0) throw std::invalid_argument(kCrfWeights);
    // Each member's (tokens' loss summed, logits): the logits give the soft F1 and the accuracy.
    std::vector<std::pair<torch::Tensor, torch::Tensor>> members;
    if (crf) {
      for (auto& [nll, logits] : tagger.member_crf_loss(ids, b.targets)) members.emplace_back(nll.sum(), logits);
    } else {
      const torch::Tensor pos = marked_weight != 1.0 ? torch::tensor({static_cast<float>(marked_weight)}) : torch::Tensor();
      for (const torch::Tensor& logits : tagger.member_logits(ids))
        members.emplace_back((at::binary_cross_entropy_with_logits(logits, b.targets, {}, pos, at::Reduction::None) * real).sum(), logits);
    }
    for (auto& [summed, logits] : members) {
      if (f1_weight > 0) summed = summed + f1_weight * (soft_f1_misses(logits, b.targets, real) * real.sum(1)).sum();
      summed = summed / tokens;
    }
    Loss out;
    for (const auto& [loss, logits] : members) {
      out.value = out.value.defined() ? out.value + loss : loss;
      torch::NoGradGuard no_grad;
      out.accuracy +=
          (((logits > 0).to(torch::kFloat32) == b.targets).to(torch::kFloat32) * real).sum().item<double>() / tokens.item<double>();
    }
    out.value = out.value / static_cast<double>(members.size());
    out.accuracy /= static_cast<double>(members.size());
    return out;
  }

  /// The loss is a mean over tokens: a share carries its tokens.
  double share_of_loss(const std::vector<std::int64_t>& share, const std::vector<std::int64_t>& batch) const override {
    const auto tokens = [&](const std::vector<std::int64_t>& rows) {
      double n = 0;
      for (std::int64_t r : rows) n += static_cast<double>(read_.x.lengths[static_cast<std::size_t>(r)]);
      return n;
    };
    const double all = tokens(batch);
    return all > 0 ? tokens(share) / all : 0.0;
  }

  std::vector<std::string> metric_names() const override { return {"loss", "accuracy", "span_f1", "span_precision", "span_recall"}; }

  torch::Tensor word_ids(const std::vector<std::int64_t>& rows) const override {
    const torch::Tensor ids = batch_ids(read_.x, rows, Width::kLongestRow, text::Side::kPost);
    return read_.x.subwords ? model_ids(read_.x, ids).select(2, 0).contiguous() : ids;
  }

  std::string logit_adjustment() const override { return "span-f1"; }

  /// The threshold of best character F1 on `rows` (the grid's; the nearer 0.5 on ties), as the
  /// offset -logit(t) to the output bias: the adjusted model marks a word at probability 0.5.
  metrics::LogitAdjustment logit_offsets(torch::jit::Module& model, const std::vector<std::int64_t>& rows) const override {
    if (!marked_ || rows.empty()) return {};
    const std::vector<float> p = token_probabilities(model, read_.x, rows, kScoringBatchSize);
    metrics::LogitAdjustment a;
    a.metric = "span_f1";
    a.before = a.after = span_scores_at(rows, p, 0.5).f1;
    double best = 0.5;
    for (double t : threshold_grid()) {
      const double f = span_scores_at(rows, p, t).f1;
      if (f > a.after + 1e-12 || (std::abs(f - a.after) <= 1e-12 && std::abs(t - 0.5) < std::abs(best - 0.5))) a.after = f, best = t;
    }
    a.offsets = {std::log((1 - best) / best)};
    return a;
  }

  Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const override {
    Evaluation out;
    if (rows.empty()) return out;
    const std::vector<float> p =
        score_shared(rows, read_.x.lengths, options.batch_size, options.sharing,
                     [&](const std::vector<std::int64_t>& some) { return token_probabilities(model, read_.x, some, options.batch_size); });
    std::vector<std::vector<std::int64_t>> predicted;
    for (std::size_t i = 0; i < rows.size(); ++i) predicted.push_back(offsets_of(rows[i], p.data() + i * read_.x.cols, 0.5));
    if (marked_) {
      double loss = 0, right = 0, tokens = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto r = static_cast<std::size_t>(rows[i]);
        for (std::int64_t t = 0; t < read_.x.lengths[r]; ++t) {
          const double q = std::clamp<double>(p[i * read_.x.cols + t], 1e-7, 1 - 1e-7), y = targets_[r * read_.x.cols + t];
          loss -= y * std::log(q) + (1 - y) * std::log(1 - q);
          right += (q > 0.5) == (y > 0.5);
          ++tokens;
        }
      }
      std::vector<std::vector<std::int64_t>> gold;
      for (std::int64_t r : rows) gold.push_back((*marked_)[static_cast<std::size_t>(r)]);
      const metrics::SpanScores s = metrics::span_scores(predicted, gold);
      out.metrics["loss"] = loss / std::max(1.0, tokens);
      out.metrics["accuracy"] = right / std::max(1.0, tokens);
      out.metrics["span_f1"] = s.f1;
      out.metrics["span_precision"] = s.precision;
      out.metrics["span_recall"] = s.recall;
      out.metrics["rows"] = static_cast<std::int64_t>(rows.size());
      out.metrics["rows_skipped"] = 0;
    }
    if (options.detail == EvaluateOptions::Detail::kFull) {  // SemEval's submission: id, spans
      out.predictions_csv = "id,spans\n";
      for (std::size_t i = 0; i < rows.size(); ++i)
        out.predictions_csv +=
            text::csv_quote(ids_[static_cast<std::size_t>(rows[i])]) + "," + text::csv_quote(nlohmann::json(predicted[i]).dump()) + "\n";
    }
    return out;
  }

  nlohmann::json data_config() const override { return config_; }

  models::DataSizes sizes() const override {
    models::DataSizes s;
    s.vocabulary = std::min<std::int64_t>(config_.num_words, tok_->vocabulary_size() + 2);
    s.input_length = read_.x.cols;
    s.subword_buckets = config_.subword_buckets;
    return s;
  }

  std::map<std::string, std::string> files() const override { return {{"tokenizer.json", tok_->to_json()}}; }

  std::vector<VocabularyWord> vocabulary() const override {
    std::vector<VocabularyWord> words;
    for (std::int32_t id = 1; id < sizes().vocabulary; ++id)
      if (const auto w = tok_->index_word(id)) words.push_back({id, *w, tok_->word_count(*w)});
    return words;
  }

  const SpanDataConfig& config() const { return config_; }
  const std::shared_ptr<const text::Tokenizer>& tokenizer() const { return tok_; }

 private:
  std::vector<std::int64_t> offsets_of(std::int64_t row, const float* p, double threshold) const {
    const auto r = static_cast<std::size_t>(row);
    return marked_offsets(read_.texts[r], read_.words[r], p, threshold);
  }

  metrics::SpanScores span_scores_at(const std::vector<std::int64_t>& rows, const std::vector<float>& p, double threshold) const {
    std::vector<std::vector<std::int64_t>> predicted, gold;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      predicted.push_back(offsets_of(rows[i], p.data() + i * read_.x.cols, threshold));
      gold.push_back((*marked_)[static_cast<std::size_t>(rows[i])]);
    }
    return metrics::span_scores(predicted, gold);
  }

  ReadTexts read_;
  std::optional<std::vector<std::vector<std::int64_t>>> marked_;
  std::vector<std::string> ids_;
  std::shared_ptr<const text::Tokenizer> tok_;
  SpanDataConfig config_;
  std::vector<float> targets_;  ///< [rows, maxlen] row-major: 1 at the tokens of marked words
};

/// What a span tagger reads on the command line, typed and read once. The text column's default
/// is the task's ("text", SemEval's), whatever another task declares.
struct SpanInputs {
  data::Given<std::string> csv, text_column, spans_column;
};

const std::vector<data::Field<SpanInputs>>& span_input_fields() {
  static const std::vector<data::Field<SpanInputs>> table = {
      {csv_input("CSV with a header row"), &SpanInputs::csv},
      {{"text-column", "Text models: the column holding the text (span taggers: default text)", "comment_text"}, &SpanInputs::text_column},
      {{"spans-column", "Span taggers: the characters people marked in each text, a list of code point offsets (SemEval-2021 Toxic Spans)",
        "spans"},
       &SpanInputs::spans_column},
  };
  return table;
}

SpanInputs read_span_inputs(const data::Inputs& in, const SpanDataConfig& defaults) {
  SpanInputs s = data::read_fields(in, span_input_fields());
  if (!s.text_column.given) s.text_column.value = defaults.text_column;
  if (!s.spans_column.given) s.spans_column.value = defaults.spans_column;
  return s;
}

/// A table's rows read by a tagger's tokenizer and config.
std::unique_ptr<SpanDataset> span_dataset(data::SpanTable table, const std::shared_ptr<const text::Tokenizer>& tok,
                                          const SpanDataConfig& config) {
  ReadTexts texts = read_texts(std::move(table.texts), tok, config);
  return std::make_unique<SpanDataset>(std::move(texts), std::move(table.marked), std::move(table.ids), tok, config);
}

/// A CSV's rows, as config's columns say (its marks required or not).
data::SpanTable span_table(const std::string& csv, const SpanDataConfig& config, data::Marks marks) {
  return data::read_span_table(csv, config.text_column, config.spans_column, "", marks);
}

/// A span tagger's explanations (report/span_explanation.h): no pictures.
class SpanExplanations : public Explanations {
 public:
  explicit SpanExplanations(std::vector<report::SpanExplanation> items) : items_(std::move(items)) {}
  std::size_t size() const override { return items_.size(); }
  nlohmann::ordered_json json(std::size_t i) const override { return report::to_json(items_.at(i)); }
  std::string json_line(std::size_t i, report::SelfAttention) const override { return report::to_json_line(items_.at(i)); }
  std::string text(std::size_t i) const override { return report::to_text(items_.at(i)); }
  std::string html() const override { return report::to_html(items_); }
  std::vector<std::string> svg() const override { return {}; }

 private:
  std::vector<report::SpanExplanation> items_;
};

class SpanTrainedModel : public TrainedModel, public SpanTaggerModel {
 public:
  explicit SpanTrainedModel(models::SavedModel saved)
      : TrainedModel(std::move(saved)),
        config_(parse_data_config<SpanDataConfig>(model_.config.at("data"), model_.path)),
        tok_(std::make_shared<const text::Tokenizer>(embedded_tokenizer(model_, "tokenizer.json"))) {}

  std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs&,
                                 const std::function<std::vector<std::string>()>& stdin_lines) const override {
    return text_inputs(arguments, stdin_lines);
  }

  std::vector<models::Method> methods() const override { return {}; }

  std::int64_t most_units() const override { return config_.maxlen; }

  std::vector<std::int64_t> units(const std::vector<Input>& inputs) const override {
    std::vector<std::int64_t> out;
    for (const Input& in : inputs)
      out.push_back(std::min<std::int64_t>(config_.maxlen, static_cast<std::int64_t>(tok_->tokenize(in.text).size())));
    return out;
  }

  std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size, const ExplainOptions& options) override {
    if (!options.label.empty()) throw std::invalid_argument("--label is for classifiers: a span tagger marks words, it has no labels");
    const ReadTexts read = read_inputs_of(inputs);
    const std::vector<float> p = token_probabilities(module(), read.x, all_rows(read.x.rows), batch_size);
    std::vector<report::SpanExplanation> all;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      report::SpanExplanation e;
      e.text = inputs[i].text;
      e.words = read.words[i];
      const float* row = p.data() + i * static_cast<std::size_t>(read.x.cols);
      for (report::WordWeight& w : e.words) w.weight = word_probability(w, row);
      e.token_probabilities.assign(row, row + read.x.lengths[i]);
      e.spans = marked_offsets(e.text, read.words[i], row, e.threshold);
      all.push_back(std::move(e));
    }
    return std::make_unique<SpanExplanations>(std::move(all));
  }

  std::vector<std::vector<std::int64_t>> text_spans(const std::vector<std::string>& texts, std::int64_t batch_size,
                                                    double threshold) override {
    const ReadTexts read = read_texts(texts, tok_, config_);
    const std::vector<float> p = token_probabilities(module(), read.x, all_rows(read.x.rows), batch_size);
    std::vector<std::vector<std::int64_t>> out;
    for (std::size_t i = 0; i < texts.size(); ++i)
      out.push_back(marked_offsets(texts[i], read.words[i], p.data() + i * static_cast<std::size_t>(read.x.cols), threshold));
    return out;
  }

  std::vector<nlohmann::ordered_json> predict(const std::vector<Input>& inputs, std::int64_t batch_size) override {
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    std::vector<nlohmann::ordered_json> out;
    for (const std::vector<std::int64_t>& spans : text_spans(texts, batch_size, 0.5)) out.push_back({{"spans", spans}});
    return out;
  }

  ModelFacts facts() const override { return {ModelFacts::Input::kTexts, {}, false}; }
  SpanTaggerModel* span_tagger() override { return this; }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["task"] = span_tagging().name();
    j["input"] = "texts";
    j["text_column"] = config_.text_column;
    j["spans_column"] = config_.spans_column;
    j["maxlen"] = config_.maxlen;
    j["threshold"] = 0.5;
    return j;
  }

  std::vector<std::string> examples() const override { return config_.examples; }
  void check(const std::vector<Input>& inputs) const override { check_texts(inputs); }

  std::unique_ptr<Dataset> open_csv(const std::string& csv, const data::Inputs& options, int) const override {
    SpanDataConfig config = config_;
    const SpanInputs in = read_span_inputs(options, config_);
    config.csv = csv;
    config.text_column = in.text_column.value;
    config.spans_column = in.spans_column.value;
    return span_dataset(span_table(csv, config, data::Marks::kOptional), tok_, config);
  }

 private:
  ReadTexts read_inputs_of(const std::vector<Input>& inputs) const {
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    return read_texts(std::move(texts), tok_, config_);
  }

  SpanDataConfig config_;
  std::shared_ptr<const text::Tokenizer> tok_;
};

class SpanTagging : public Task {
 public:
  const char* name() const override { return "span-tagging"; }

  ForCommand for_command(Command command) const override {
    const std::vector<data::InputSpec> columns = {span_input_fields()[1].spec, span_input_fields()[2].spec};
    switch (command) {
      case Command::kTrain:
        return {"a CSV's text column and the characters people marked in each text (--spans-column), a mark per token",
                {span_input_fields()[0].spec, val_csv_input(), columns[0], columns[1]}};
      case Command::kExplain:
        return {"the marked characters and each word's probability of being marked", {}};
      case Command::kEvaluate:
        return {"the marked characters of each row (SemEval's id,spans); with a spans column the character F1",
                {csv_input("CSV to score"), columns[0], columns[1]}};
      case Command::kFaithfulness:
        return {"not measured (its outputs are marks per token, not class probabilities to erase from)", {}};
      case Command::kExport:
        return {"forward(ids) -> each token's probability of being marked", {}};
      default:
        return {"not for this task (it reads a classifier's probabilities)", {}};
    }
  }

  std::vector<std::string> unlabelled_texts(const data::Inputs& in) const override {
    const SpanInputs given = read_span_inputs(in, SpanDataConfig());
    return data::read_span_table(given.csv.value, given.text_column.value, given.spans_column.value, "", data::Marks::kOptional).texts;
  }

  nlohmann::json training_recipe(const data::Inputs&) const override {
    // Word vectors learnt from the file's own texts first (skip-gram, 10 passes): on Toxic Spans the
    // held-out character F1 of the training part's validation rows went 0.664 -> 0.680 with them.
    // Each text's soft F1 beside the tokens' cross-entropy: 0.649 -> 0.661 over the five folds of
    // Toxic Spans' train (docs/spans.md).
    return {{"monitor", "val_span_f1"},
            {"early_stopping_patience", 3},
            {"logit_adjustment", "span-f1"},
            {"pretrain_epochs", 10},
            {"span_f1_loss", 1.0}};
  }

  void check_loss_weights(const LossWeights& spec, torch::jit::Module& model) const override {
    // (--span-f1-loss's range is the options table's check, and Dataset::loss_weights')
    if (!spec.positive.empty() && models::SpanTagger(model).is_crf()) throw std::invalid_argument(kCrfWeights);
  }

  std::unique_ptr<Dataset> open(const data::Inputs& in, const models::ModelEntry&, const std::string& run_dir, int threads) const override {
    SpanDataConfig config;
    const SpanInputs given = read_span_inputs(in, config);
    if (!given.csv.given) throw std::invalid_argument("--csv is required");
    config.text_column = given.text_column.value;
    config.spans_column = given.spans_column.value;
    config.subword_buckets = text::kDefaultSubwordBuckets;
    data::SpanTable table = span_table(given.csv.value, config, data::Marks::kRequired);
    text::TokenizerOptions options;
    options.num_words = config.num_words;
    auto tok = std::make_shared<text::Tokenizer>(options);
    tok->fit_on_texts(table.texts, threads);
    std::int64_t longest = 1;
    for (const std::string& t : table.texts) longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(tok->tokenize(t).size()));
    config.maxlen = std::min(longest, kMostTokens);
    for (std::size_t r = 0; r < std::min<std::size_t>(4, table.texts.size()); ++r) config.examples.push_back(table.texts[r]);
    config.csv = keep_copy(given.csv.value, run_dir);
    return span_dataset(std::move(table), std::move(tok), config);
  }

  std::unique_ptr<Dataset> reopen(const nlohmann::json& data_config, const std::string& run_dir, int) const override {
    const auto config = parse_data_config<SpanDataConfig>(data_config, run_dir + "/config.json");
    auto tok = std::make_shared<const text::Tokenizer>(read_tokenizer((fs::path(run_dir) / "tokenizer.json").string()));
    return span_dataset(span_table(config.csv, config, data::Marks::kRequired), tok, config);
  }

  std::unique_ptr<Dataset> open_validation(const std::string& csv, const Dataset& training, const std::string& run_dir,
                                           int) const override {
    const auto& train = dynamic_cast<const SpanDataset&>(training);
    SpanDataConfig config = train.config();
    data::SpanTable table = span_table(csv, config, data::Marks::kRequired);
    config.csv = keep_copy(csv, run_dir, "validation.csv");
    config.examples.clear();
    return span_dataset(std::move(table), train.tokenizer(), config);
  }

  std::unique_ptr<TrainedModel> use(models::SavedModel model) const override {
    return std::make_unique<SpanTrainedModel>(std::move(model));
  }
};

}  // namespace

const Task& span_tagging() {
  static const SpanTagging task;
  return task;
}

}  // namespace attn::tasks
