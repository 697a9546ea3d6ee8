// Text classification: everything attn knows about text classifiers' data (see task.h).
#include "attn/tasks/text_classification.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include <torch/torch.h>

#include "attn/data/prepare.h"
#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data_reader.h"
#include "attn/nn/script_module.h"
#include "attn/tasks/metrics.h"
#include "attn/text/csv.h"
#include "attn/text/dataset.h"

namespace attn::tasks {
namespace {

namespace fs = std::filesystem;

std::string file_in(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

void align_words(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text,
                 std::size_t all);

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

class TextDataset : public Dataset {
 public:
  /// `scored` (empty: every row) marks the rows whose labels count (Kaggle's test_labels.csv -1 rows do not).
  TextDataset(io::PreparedData data, text::Tokenizer tokenizer, TextDataConfig config, std::vector<bool> scored = {})
      : data_(std::move(data)), tokenizer_(std::move(tokenizer)), config_(std::move(config)), scored_(std::move(scored)) {
    config_.rows = data_.x.rows;
    config_.maxlen = data_.x.cols;
    config_.padding = data_.padding;
    if (!data_.label_names.empty()) {
      config_.labels = data_.label_names;
      labels_ = torch::from_blob(data_.labels.data(), {data_.x.rows, static_cast<std::int64_t>(data_.label_names.size())},
                                 torch::kFloat32);
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
    const torch::Tensor logits = models::TextClassifier(model).logits(b.inputs.at(0).toTensor()).scores;
    const torch::Tensor loss = torch::binary_cross_entropy_with_logits(logits, b.targets, {}, pos_weight);
    torch::NoGradGuard no_grad;  // Keras' binary accuracy: (logit > 0) == target
    return {loss, ((logits > 0).to(torch::kFloat32) == b.targets).to(torch::kFloat32).mean().item<double>()};
  }

  Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const override {
    Evaluation out;
    if (rows.empty()) return out;
    const std::vector<float> probs = score_shared(rows, options.sharing, [&](const std::vector<std::int64_t>& some) {
      return predict(model, data_.x, data_.padding, some, options.batch_size);
    });
    const std::size_t L = rows.empty() ? 0 : probs.size() / rows.size();
    if (labels_.defined()) {
      std::vector<float> y;
      std::vector<bool> keep;
      y.reserve(rows.size() * L);
      for (std::int64_t r : rows) {
        y.insert(y.end(), data_.labels.begin() + r * static_cast<std::int64_t>(L), data_.labels.begin() + (r + 1) * static_cast<std::int64_t>(L));
        if (!scored_.empty()) keep.push_back(scored_[static_cast<std::size_t>(r)]);
      }
      out.metrics = to_json(binary_metrics(probs, y, L, keep), config_.labels);
      if (options.detail == EvaluateOptions::Detail::kFull) add_to(out.metrics, decisions(probs, y, L, keep, thresholds_), config_.labels);
    }
    if (options.detail == EvaluateOptions::Detail::kFull) {  // Kaggle's sample_submission layout
      std::string& csv = out.predictions_csv;
      csv = "id";
      for (const auto& l : config_.labels) csv += "," + l;
      csv += "\n";
      char buf[32];
      for (std::size_t i = 0; i < rows.size(); ++i) {
        csv += data_.ids.empty() ? std::to_string(rows[i] + 1) : data_.ids[static_cast<std::size_t>(rows[i])];
        for (std::size_t k = 0; k < L; ++k) {
          std::snprintf(buf, sizeof buf, ",%.6f", probs[i * L + k]);
          csv += buf;
        }
        csv += "\n";
      }
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
  /// Decision thresholds for precision, recall and F1 in a full evaluation ("0.5", "auto", "t1,...").
  void set_thresholds(std::string thresholds) { thresholds_ = std::move(thresholds); }

 private:
  std::string thresholds_ = "0.5";
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

class TextModel : public TrainedModel {
 public:
  explicit TextModel(models::SavedModel saved)
      : TrainedModel(std::move(saved)),
        config_(parse_data_config<TextDataConfig>(model_.config.at("data"), model_.path)),
        tokenizer_(embedded_tokenizer(model_, "tokenizer.json")) {
    if (config_.labels.empty() || config_.maxlen < 1)
      throw std::runtime_error(model_.path + ": embedded config.json: keys 'data.labels' and 'data.maxlen' are required");
  }

  std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs&,
                                 const std::function<std::vector<std::string>()>& stdin_lines) const override {
    return text_inputs(arguments, stdin_lines);
  }

  std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size) override {
    nn::EvalModeGuard eval(module());
    models::TextClassifier model(module());
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    return std::make_unique<ExplanationList<report::TextExplanation>>(explain_texts(model, tokenizer_, config_, texts, batch_size));
  }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["task"] = text_classification().name();
    j["input"] = "texts";
    j["labels"] = config_.labels;
    j["maxlen"] = config_.maxlen;
    j["self_attention"] = models::TextClassifier(model_.module).has_self_attention();
    return j;
  }

  std::vector<std::string> examples() const override {
    return {"ice cream", "ice cream sucks", "Thanks for fixing the citation, good work.", "You are a stupid idiot and your edits are garbage"};
  }

  void check(const std::vector<Input>& inputs) const override { check_texts(inputs); }

  std::vector<nlohmann::ordered_json> predict(const std::vector<Input>& inputs, std::int64_t batch_size) override {
    std::vector<std::string> texts;
    for (const Input& in : inputs) texts.push_back(in.text);
    text::PadOptions pad;
    pad.maxlen = config_.maxlen;  // as the training data was
    pad.padding = config_.padding;
    pad.truncating = config_.truncating;
    const text::PaddedSequences x = text::pad_sequences(tokenizer_.texts_to_sequences(texts), pad);
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
    if (options.given("thresholds")) check_thresholds(options.text("thresholds"), config_.labels.size());  // before the work
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
    config.dir.clear();
    config.text_column = o.columns.text_column;
    config.id_column = o.columns.id_column;
    std::vector<bool> scored;
    if (options.given("labels-csv")) scored = join_kaggle_labels(prepared.data, options.text("labels-csv"), csv);
    auto dataset = std::make_unique<TextDataset>(std::move(prepared.data), tokenizer_, std::move(config), std::move(scored));
    if (options.given("thresholds")) dataset->set_thresholds(options.text("thresholds"));
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
      std::copy(t.labels.begin() + static_cast<std::ptrdiff_t>(it->second * L), t.labels.begin() + static_cast<std::ptrdiff_t>((it->second + 1) * L),
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

  std::vector<data::InputSpec> inputs(Command command) const override {
    switch (command) {
      case Command::kTrain: {
        std::vector<data::InputSpec> specs = data::prepare_inputs();
        specs.insert(specs.begin() + 1, {"data", "Text models: prepared data directory (attn prepare --out DIR) instead of --csv", ""});
        specs.insert(specs.begin() + 2, val_csv_input());
        return specs;
      }
      case Command::kExplain:
        return {};
      case Command::kEvaluate:
        return {csv_input("CSV to score"),
                {"text-column", "Text models: the column holding the text (default: the training run's)", ""},
                {"id-column", "Text models: the column holding row ids (default: the training run's)", ""},
                {"labels-csv", "Text models: labels by id, Kaggle's test_labels.csv layout (-1 = not scored)", ""},
                thresholds_input()};
    }
    return {};
  }

  std::unique_ptr<Dataset> open(const data::Inputs& in, const std::string& run_dir, int threads) const override {
    TextDataConfig config;
    std::unique_ptr<TextDataset> dataset;
    if (in.given("data")) {
      if (in.given("csv")) throw std::invalid_argument("give one of --csv and --data");
      for (const data::InputSpec& s : data::prepare_inputs())
        if (in.given(s.name))
          throw std::invalid_argument("--" + s.name + " prepares a --csv; the data in --data was prepared already");
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

std::vector<report::TextExplanation> explain_texts(models::TextClassifier& model, const text::Tokenizer& tok,
                                                  const TextDataConfig& config, const std::vector<std::string>& texts,
                                                  std::int64_t batch_size) {
  // The texts' ids, cut to maxlen as the training data was (Keras' truncating 'pre' keeps a long
  // text's end), run in length-bucketed batches; each row's outputs are read at its real positions.
  const std::vector<text::Sequence> seqs = tok.texts_to_sequences(texts);
  text::PadOptions pad;
  pad.maxlen = std::max<std::int64_t>(1, config.maxlen);
  pad.padding = config.padding;
  pad.truncating = config.truncating;
  const text::PaddedSequences x = text::pad_sequences(seqs, pad);
  std::vector<report::TextExplanation> out(texts.size());
  torch::NoGradGuard no_grad;
  for_each_bucket(all_rows(x.rows), x.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor ids = batch_ids(x, batch, Width::kLongestRow, config.padding);
    const models::Scored scored = model.forward(ids);
    const torch::Tensor probs = scored.scores.to(torch::kFloat32).contiguous(), att = scored.attention.to(torch::kFloat32).contiguous();
    std::vector<torch::Tensor> layers;
    if (model.has_self_attention()) layers = model.self_attention(ids);  // each [B, heads, W, W]
    const std::int64_t width = ids.size(1);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      report::TextExplanation& e = out[at[i]];
      const auto b = static_cast<std::int64_t>(i);
      const std::int64_t n = x.lengths[static_cast<std::size_t>(batch[i])];
      const std::int64_t first = config.padding == text::Side::kPre ? width - n : 0;  // the row's real positions
      const torch::Tensor row_ids = ids[b].slice(0, first, first + n).contiguous();
      e.ids.assign(row_ids.data_ptr<std::int64_t>(), row_ids.data_ptr<std::int64_t>() + n);
      e.probabilities.assign(probs[b].data_ptr<float>(), probs[b].data_ptr<float>() + probs.size(1));
      const torch::Tensor a = att[b].slice(0, first, first + n).contiguous();
      e.attention.assign(a.data_ptr<float>(), a.data_ptr<float>() + n);
      for (const torch::Tensor& layer : layers) {
        std::vector<std::vector<float>> heads;
        for (std::int64_t h = 0; h < layer.size(1); ++h) {
          const torch::Tensor w = layer[b][h].slice(0, first, first + n).slice(1, first, first + n).to(torch::kFloat32).contiguous();
          heads.emplace_back(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
        }
        if (n > 0) e.self_attention.push_back(std::move(heads));
      }
    }
  });
  for (std::size_t t = 0; t < texts.size(); ++t) align_words(out[t], tok, config, texts[t], seqs[t].size());
  return out;
}

report::TextExplanation explain_text(models::TextClassifier& model, const text::Tokenizer& tok, const TextDataConfig& config,
                                     const std::string& text) {
  return explain_texts(model, tok, config, {text}, 1).front();
}

namespace {

/// Fills e's words: each word of `text` with its tokens, its status and the attention of its kept
/// tokens. `all` is the text's token count before the maxlen cut.
void align_words(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text,
                 std::size_t all) {
  e.text = text;
  e.label_names = config.labels;
  const auto maxlen = static_cast<std::size_t>(config.maxlen);
  std::size_t cut_front = 0, cut_back = 0;
  if (maxlen > 0 && all > maxlen) (config.truncating == text::Side::kPre ? cut_front : cut_back) = all - maxlen;
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
  e.words.reserve(chunks.size());
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
        if (next_id < cut_front || next_id >= all - cut_back) {
          status = "dropped";
          w.reason = "beyond maxlen " + std::to_string(maxlen) + " (truncated as in training)";
        } else {
          w.weight += e.attention[next_id - cut_front];
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

}  // namespace
}  // namespace attn::tasks
