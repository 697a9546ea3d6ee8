// The three tasks (see task.h): how each kind of model's data is read, batched, scored.
#include "attn/train/task.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <torch/torch.h>

#include "attn/io/atomic_file.h"
#include "attn/io/prepared_data_reader.h"
#include "attn/text/unicode.h"
#include "attn/train/batching.h"
#include "attn/train/metrics.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

std::string file_in(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

text::Tokenizer read_tokenizer(const std::string& path) { return text::Tokenizer::from_json(io::read_file(path), path); }

torch::Tensor first_output(const c10::IValue& v) { return v.toTupleRef().elements()[0].toTensor(); }

/// The binary tasks' loss: cross-entropy of the `logits` method's sigmoid outputs, and the share of
/// (logit > 0) == target (Keras' binary accuracy).
std::pair<torch::Tensor, double> binary_loss(torch::jit::Module& model, const Batch& b) {
  const torch::Tensor logits = first_output(model.get_method("logits")(b.inputs));
  const torch::Tensor loss = torch::binary_cross_entropy_with_logits(logits, b.targets);
  torch::NoGradGuard no_grad;
  return {loss, ((logits > 0).to(torch::kFloat32) == b.targets).to(torch::kFloat32).mean().item<double>()};
}

std::vector<std::int64_t> all_rows(std::int64_t n) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = i;
  return rows;
}

// ---- Text classification -------------------------------------------------------------------

class TextTask : public Task {
 public:
  TextTask(io::PreparedData data, text::Tokenizer tokenizer, nlohmann::json config)
      : data_(std::move(data)), tokenizer_(std::move(tokenizer)), config_(std::move(config)) {
    if (data_.label_names.empty()) throw std::invalid_argument(config_.value("dir", std::string("data")) + ": the data has no label columns");
    labels_ = torch::from_blob(data_.labels.data(), {data_.x.rows, static_cast<std::int64_t>(data_.label_names.size())},
                               torch::kFloat32);
  }
  std::int64_t rows() const override { return data_.x.rows; }
  const std::vector<std::int64_t>& lengths() const override { return data_.x.lengths; }
  Batch batch(const std::vector<std::int64_t>& rows, bool trim) const override {
    Batch b;
    const torch::Tensor ids = batch_ids(data_.x, rows, trim, data_.padding);
    b.tokens = ids.numel();
    b.inputs = {ids};
    b.targets = labels_.index_select(0, torch::tensor(rows, torch::kInt64));
    return b;
  }
  std::pair<torch::Tensor, double> loss(torch::jit::Module& model, const Batch& b) const override {
    return binary_loss(model, b);
  }
  nlohmann::ordered_json evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows,
                                  std::int64_t batch_size) const override {
    nlohmann::ordered_json j;
    if (rows.empty()) return j;
    const std::vector<float> probs = predict(model, data_.x, rows, data_.padding, batch_size);
    const std::size_t L = data_.label_names.size();
    std::vector<float> y;
    y.reserve(rows.size() * L);
    for (std::int64_t r : rows)
      y.insert(y.end(), data_.labels.begin() + r * static_cast<std::int64_t>(L),
               data_.labels.begin() + (r + 1) * static_cast<std::int64_t>(L));
    const Evaluation e = train::evaluate(probs, y, L);
    nlohmann::ordered_json auc = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < L; ++k) auc[data_.label_names[k]] = number_or_null(e.auc[k]);
    j["loss"] = e.loss;
    j["acc"] = e.accuracy;
    j["auc"] = auc;
    j["mean_auc"] = number_or_null(e.mean_auc);
    return j;
  }
  const nlohmann::json& data_config() const override { return config_; }
  nlohmann::json model_sizes() const override {
    const auto& to = tokenizer_.options();
    const std::int64_t words = to.num_words && *to.num_words ? *to.num_words : tokenizer_.vocabulary_size() + 2;
    return {{"num_words", words},
            {"labels", static_cast<std::int64_t>(data_.label_names.size())},
            {"max_length", std::max<std::int64_t>(512, data_.x.cols)}};
  }
  std::map<std::string, std::string> files() const override { return {{"tokenizer.json", tokenizer_.to_json()}}; }

 private:
  io::PreparedData data_;
  text::Tokenizer tokenizer_;
  nlohmann::json config_;
  torch::Tensor labels_;
};

std::unique_ptr<Task> open_text(const DataSource& s, const std::string& run_dir) {
  std::string dir = s.data_dir;
  io::PreparedData data;
  std::optional<text::Tokenizer> tokenizer;
  if (s.prepare) {
    dir = file_in(run_dir, "data");
    data::Prepared prepared = data::prepare_csv(*s.prepare);
    data::write_prepared_dir(prepared, dir);
    data = std::move(prepared.data);
    tokenizer = std::move(prepared.tokenizer);
  } else {
    if (dir.empty()) throw std::invalid_argument("text models train on --csv or --data");
    data = io::read_prepared(file_in(dir, "data.pt"));
    tokenizer = read_tokenizer(file_in(dir, "tokenizer.json"));
  }
  nlohmann::json config = {{"dir", fs::absolute(dir).string()},
                           {"rows", data.x.rows},
                           {"maxlen", data.x.cols},
                           {"padding", text::side_name(data.padding)},
                           {"labels", data.label_names}};
  if (s.prepare) config["truncating"] = text::side_name(s.prepare->pad.truncating);
  return std::make_unique<TextTask>(std::move(data), std::move(*tokenizer), std::move(config));
}

std::unique_ptr<Task> reopen_text(const nlohmann::json& config, const std::string& run_dir) {
  const std::string dir = config.at("dir");
  return std::make_unique<TextTask>(io::read_prepared(file_in(dir, "data.pt")),
                                    read_tokenizer(file_in(run_dir, "tokenizer.json")), config);
}

// ---- Feature classification ----------------------------------------------------------------

class FeatureTask : public Task {
 public:
  FeatureTask(data::FeatureTable table, nlohmann::json config) : t_(std::move(table)), config_(std::move(config)) {
    if (t_.rows == 0) throw std::invalid_argument(config_.value("csv", std::string()) + ": no data rows");
    if (t_.labels.empty()) throw std::invalid_argument(config_.value("csv", std::string()) + ": no label column");
    lengths_.assign(static_cast<std::size_t>(t_.rows), 1);
    d_ = static_cast<std::int64_t>(t_.feature_names.size());
    x_ = torch::from_blob(t_.values.data(), {t_.rows, d_}, torch::kFloat32);
    y_ = torch::from_blob(t_.labels.data(), {t_.rows, 1}, torch::kFloat32);
  }
  std::int64_t rows() const override { return t_.rows; }
  const std::vector<std::int64_t>& lengths() const override { return lengths_; }
  Batch batch(const std::vector<std::int64_t>& rows, bool) const override {
    const torch::Tensor index = torch::tensor(rows, torch::kInt64);
    Batch b;
    b.inputs = {x_.index_select(0, index)};
    b.targets = y_.index_select(0, index);
    b.tokens = static_cast<std::int64_t>(rows.size()) * d_;
    return b;
  }
  std::pair<torch::Tensor, double> loss(torch::jit::Module& model, const Batch& b) const override {
    return binary_loss(model, b);
  }
  nlohmann::ordered_json evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows,
                                  std::int64_t batch_size) const override {
    nlohmann::ordered_json j;
    if (rows.empty()) return j;
    std::vector<float> values, y;
    for (std::int64_t r : rows) {
      values.insert(values.end(), t_.values.begin() + r * d_, t_.values.begin() + (r + 1) * d_);
      y.push_back(t_.labels[static_cast<std::size_t>(r)]);
    }
    const auto [probs, attention] = predict_features(model, values, d_, batch_size);
    const Evaluation e = train::evaluate(probs, y, 1);
    j["loss"] = e.loss;
    j["acc"] = e.accuracy;
    j["auc"] = number_or_null(e.mean_auc);
    nlohmann::ordered_json mean = nlohmann::ordered_json::object();
    for (std::int64_t f = 0; f < d_; ++f) {
      double sum = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) sum += attention[i * static_cast<std::size_t>(d_) + static_cast<std::size_t>(f)];
      mean[t_.feature_names[static_cast<std::size_t>(f)]] = sum / static_cast<double>(rows.size());
    }
    j["attention"] = mean;
    return j;
  }
  const nlohmann::json& data_config() const override { return config_; }
  nlohmann::json model_sizes() const override { return {{"features", d_}}; }
  std::map<std::string, std::string> files() const override { return {}; }

 private:
  data::FeatureTable t_;
  nlohmann::json config_;
  std::vector<std::int64_t> lengths_;
  std::int64_t d_ = 0;
  torch::Tensor x_, y_;
};

/// Reads `csv`; config.json will name `stored` (the run's own copy, see keep_copy).
std::unique_ptr<Task> open_features(const std::string& csv, const std::vector<std::string>& features,
                                    const std::string& label, const std::string& stored) {
  data::FeatureTable t = data::read_feature_csv(csv, features, label);
  nlohmann::json config = {{"csv", stored}, {"rows", t.rows}, {"features", t.feature_names}, {"label", t.label_name}};
  return std::make_unique<FeatureTask>(std::move(t), std::move(config));
}

// ---- Sequence to sequence -------------------------------------------------------------------

/// Characters, case-folded on the source side (dates come in random case), as typed on the target.
text::TokenizerOptions char_tokenizer(bool source) {
  text::TokenizerOptions o;
  o.char_level = true;
  o.lower = source;
  if (source) o.oov_token = "<unk>";  // an unseen source character still takes a position
  return o;
}

class Seq2SeqTask : public Task {
 public:
  Seq2SeqTask(data::PairTable pairs, text::Tokenizer source, text::Tokenizer target, nlohmann::json config, int threads)
      : pairs_(std::move(pairs)), source_(std::move(source)), target_(std::move(target)), config_(std::move(config)) {
    if (pairs_.sources.empty()) throw std::invalid_argument(config_.value("csv", std::string()) + ": no data rows");
    if (pairs_.targets.empty()) throw std::invalid_argument(config_.value("csv", std::string()) + ": no target column");
    enc_ = encode_pairs(pairs_, source_, target_, threads);
    std::int64_t longest_target = 0;
    for (auto l : enc_.target.lengths) longest_target = std::max(longest_target, l);
    config_["rows"] = enc_.source.rows;
    config_["max_source_length"] = enc_.source.cols;
    config_["max_target_length"] = longest_target - 1;  // without the end id
  }
  std::int64_t rows() const override { return enc_.source.rows; }
  const std::vector<std::int64_t>& lengths() const override { return enc_.source.lengths; }
  Batch batch(const std::vector<std::int64_t>& rows, bool trim) const override {
    Batch b;
    const torch::Tensor src = batch_ids(enc_.source, rows, trim, text::Side::kPost);
    const torch::Tensor out = batch_ids(enc_.target, rows, trim, text::Side::kPost);  // y_1 .. y_n, end
    torch::Tensor in = torch::full_like(out, enc_.start_id);                             // start, y_1 .. y_n
    if (out.size(1) > 1) in.slice(1, 1).copy_(out.slice(1, 0, out.size(1) - 1));
    b.inputs = {src, in};
    b.targets = out;
    b.tokens = src.numel();
    return b;
  }
  std::pair<torch::Tensor, double> loss(torch::jit::Module& model, const Batch& b) const override {
    const torch::Tensor logits = first_output(model.get_method("logits")(b.inputs));
    const torch::Tensor flat = logits.reshape({-1, logits.size(-1)}), y = b.targets.reshape({-1});
    const torch::Tensor loss =
        torch::nn::functional::cross_entropy(flat, y, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(0));
    torch::NoGradGuard no_grad;
    const torch::Tensor real = y != 0;
    const double acc = (flat.argmax(-1).eq(y) & real).sum().item<double>() / std::max(1.0, real.sum().item<double>());
    return {loss, acc};
  }
  nlohmann::ordered_json evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows,
                                  std::int64_t batch_size) const override {
    nlohmann::ordered_json j;
    if (rows.empty()) return j;
    torch::NoGradGuard no_grad;
    const bool was_training = model.is_training();
    model.eval();
    double loss_sum = 0, correct = 0, chars = 0;
    for (const auto& rows_b : make_batches(rows, enc_.source.lengths, batch_size, true, false, 0)) {
      const Batch b = batch(rows_b, true);
      const torch::Tensor logits = first_output(model.get_method("logits")(b.inputs));
      const torch::Tensor flat = logits.reshape({-1, logits.size(-1)}), y = b.targets.reshape({-1});
      const torch::Tensor real = y != 0;
      loss_sum += torch::nn::functional::cross_entropy(
                      flat, y, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(0).reduction(torch::kSum))
                      .item<double>();
      correct += (flat.argmax(-1).eq(y) & real).sum().item<double>();
      chars += real.sum().item<double>();
    }
    const std::vector<Translation> out = translate(model, enc_.source, rows, enc_.end_id, batch_size);
    std::vector<std::string> predicted, targets;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      predicted.push_back(decode(target_, out[i].ids));
      targets.push_back(pairs_.targets[static_cast<std::size_t>(rows[i])]);
    }
    const StringAccuracy a = string_accuracy(predicted, targets);
    model.train(was_training);
    j["loss"] = loss_sum / std::max(1.0, chars);
    j["acc"] = correct / std::max(1.0, chars);
    j["exact_match"] = a.exact_match;
    j["char_acc"] = a.char_accuracy;
    return j;
  }
  const nlohmann::json& data_config() const override { return config_; }
  nlohmann::json model_sizes() const override {
    return {{"source_vocab", source_.vocabulary_size() + 2},
            {"target_vocab", enc_.start_id + 1},
            {"max_source_length", std::max<std::int64_t>(64, enc_.source.cols)},
            {"max_output_length", config_.at("max_target_length").get<std::int64_t>() + 10}};
  }
  std::map<std::string, std::string> files() const override {
    return {{"tokenizer.json", source_.to_json()}, {"target_tokenizer.json", target_.to_json()}};
  }

 private:
  data::PairTable pairs_;
  text::Tokenizer source_, target_;
  nlohmann::json config_;
  SequencePairs enc_;
};

}  // namespace

namespace {
std::unique_ptr<Task> reopen_data(models::TaskKind kind, const nlohmann::json& config, const std::string& run_dir);
}  // namespace

std::unique_ptr<Task> text_task(io::PreparedData data, text::Tokenizer tokenizer, nlohmann::json data_config) {
  if (data_config.is_null()) data_config = nlohmann::json::object();
  return std::make_unique<TextTask>(std::move(data), std::move(tokenizer), std::move(data_config));
}

std::unique_ptr<Task> open_task(models::TaskKind kind, const DataSource& s, const std::string& run_dir) {
  if (kind == models::TaskKind::kTextClassification) return open_text(s, run_dir);
  if (s.csv.empty()) throw std::invalid_argument(std::string(models::task_name(kind)) + " models train on --csv");
  // The run keeps its own copy of the CSV (RUN/data/NAME.csv), so --resume never depends on the
  // original file; it is written once the file has been read without error.
  const std::string stored = fs::absolute(fs::path(run_dir) / "data" / fs::path(s.csv).filename()).string();
  std::unique_ptr<Task> task;
  if (kind == models::TaskKind::kFeatureClassification) {
    task = open_features(s.csv, s.feature_columns, s.label_column, stored);
  } else {
    data::PairTable pairs = data::read_pair_csv(s.csv, s.source_column, s.target_column);
    text::Tokenizer source(char_tokenizer(true)), target(char_tokenizer(false));
    source.fit_on_texts(pairs.sources, s.threads);
    target.fit_on_texts(pairs.targets, s.threads);
    nlohmann::json config = {{"csv", stored}, {"source_column", s.source_column}, {"target_column", s.target_column}};
    task = std::make_unique<Seq2SeqTask>(std::move(pairs), std::move(source), std::move(target), std::move(config), s.threads);
  }
  io::ensure_directory(file_in(run_dir, "data"));
  io::write_file_atomic(stored, io::read_file(s.csv));
  return task;
}

std::unique_ptr<Task> reopen_task(models::TaskKind kind, const nlohmann::json& config, const std::string& run_dir) {
  const nlohmann::json& d = config.at("data");
  std::unique_ptr<Task> task = reopen_data(kind, config, run_dir);
  // The split and the batches follow the row count: a changed file would not resume exactly.
  if (task->rows() != d.at("rows").get<std::int64_t>())
    throw std::runtime_error(d.value("csv", d.value("dir", std::string("the data"))) + ": has " + std::to_string(task->rows()) +
                             " rows, the run was trained on " + d.at("rows").dump() + ": it changed since; start a new run");
  return task;
}

namespace {
std::unique_ptr<Task> reopen_data(models::TaskKind kind, const nlohmann::json& config, const std::string& run_dir) {
  const nlohmann::json& d = config.at("data");
  switch (kind) {
    case models::TaskKind::kTextClassification:
      return reopen_text(d, run_dir);
    case models::TaskKind::kFeatureClassification:
      return open_features(d.at("csv"), d.at("features").get<std::vector<std::string>>(), d.at("label"), d.at("csv"));
    case models::TaskKind::kSequenceToSequence: {
      data::PairTable pairs = data::read_pair_csv(d.at("csv"), d.at("source_column"), d.at("target_column"));
      return std::make_unique<Seq2SeqTask>(std::move(pairs), read_tokenizer(file_in(run_dir, "tokenizer.json")),
                                           read_tokenizer(file_in(run_dir, "target_tokenizer.json")), d,
                                           config.at("training").value("threads", 1));
    }
  }
  throw std::logic_error("unknown task kind");
}
}  // namespace

// ---- Inference helpers ----------------------------------------------------------------------

torch::Tensor batch_ids(const text::PaddedSequences& x, const std::vector<std::int64_t>& rows, bool trim,
                        text::Side padding) {
  std::int64_t width = x.cols;
  if (trim) {
    width = 1;
    for (std::int64_t r : rows) width = std::max(width, x.lengths[static_cast<std::size_t>(r)]);
    width = std::min(width, x.cols);
  }
  torch::Tensor out = torch::zeros({static_cast<std::int64_t>(rows.size()), width}, torch::kInt64);
  if (x.cols == 0) return out;
  auto* dst = out.data_ptr<std::int64_t>();
  const std::int64_t offset = padding == text::Side::kPre ? x.cols - width : 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int32_t* src = x.ids.data() + rows[i] * x.cols + offset;
    for (std::int64_t c = 0; c < width; ++c) dst[static_cast<std::int64_t>(i) * width + c] = src[c];
  }
  return out;
}

std::vector<float> predict(torch::jit::Module& model, const text::PaddedSequences& x, const std::vector<std::int64_t>& rows,
                           text::Side padding, std::int64_t batch_size) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<std::int64_t> position(static_cast<std::size_t>(x.rows), -1);
  for (std::size_t i = 0; i < rows.size(); ++i) position[static_cast<std::size_t>(rows[i])] = static_cast<std::int64_t>(i);
  std::vector<float> out;
  std::int64_t labels = 0;
  for (const auto& batch : make_batches(rows, x.lengths, batch_size, /*bucket=*/true, /*shuffle=*/false, 0)) {
    const torch::Tensor probs = first_output(model.forward({batch_ids(x, batch, true, padding)})).to(torch::kFloat32).contiguous();
    if (out.empty()) {
      labels = probs.size(1);
      out.assign(rows.size() * static_cast<std::size_t>(labels), 0.0f);
    }
    const float* p = probs.data_ptr<float>();
    for (std::size_t i = 0; i < batch.size(); ++i)
      std::copy(p + static_cast<std::int64_t>(i) * labels, p + static_cast<std::int64_t>(i + 1) * labels,
                out.begin() + position[static_cast<std::size_t>(batch[i])] * labels);
  }
  model.train(was_training);
  return out;
}

std::pair<std::vector<float>, std::vector<float>> predict_features(torch::jit::Module& model, const std::vector<float>& values,
                                                                   std::int64_t features, std::int64_t batch_size) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be >= 1");
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const std::int64_t n = features > 0 ? static_cast<std::int64_t>(values.size()) / features : 0;
  const torch::Tensor x = torch::from_blob(const_cast<float*>(values.data()), {n, features}, torch::kFloat32);
  std::vector<float> probs, attention;
  for (std::int64_t start = 0; start < n; start += batch_size) {
    const auto out = model.forward({x.slice(0, start, std::min(n, start + batch_size))}).toTuple();
    const torch::Tensor p = out->elements()[0].toTensor().to(torch::kFloat32).contiguous();
    const torch::Tensor a = out->elements()[1].toTensor().to(torch::kFloat32).contiguous();
    probs.insert(probs.end(), p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    attention.insert(attention.end(), a.data_ptr<float>(), a.data_ptr<float>() + a.numel());
  }
  model.train(was_training);
  return {probs, attention};
}

SequencePairs encode_pairs(const data::PairTable& pairs, const text::Tokenizer& source, const text::Tokenizer& target,
                           int threads) {
  SequencePairs s;
  text::PadOptions pad;
  pad.padding = pad.truncating = text::Side::kPost;
  s.source = text::pad_sequences(source.texts_to_sequences(pairs.sources, threads), pad);
  s.end_id = target.vocabulary_size() + 1;
  s.start_id = s.end_id + 1;
  if (!pairs.targets.empty()) {
    std::vector<text::Sequence> t = target.texts_to_sequences(pairs.targets, threads);
    for (auto& seq : t) seq.push_back(s.end_id);
    s.target = text::pad_sequences(t, pad);
  }
  return s;
}

std::vector<Translation> translate(torch::jit::Module& model, const text::PaddedSequences& source,
                                   const std::vector<std::int64_t>& rows, std::int32_t end_id, std::int64_t batch_size) {
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const std::int64_t max_length = model.attr("max_output_length").toInt();
  std::vector<std::int64_t> position(static_cast<std::size_t>(source.rows), -1);
  for (std::size_t i = 0; i < rows.size(); ++i) position[static_cast<std::size_t>(rows[i])] = static_cast<std::int64_t>(i);
  std::vector<Translation> out(rows.size());
  torch::jit::Method method = model.get_method("translate");
  for (const auto& batch : make_batches(rows, source.lengths, batch_size, true, false, 0)) {
    const torch::Tensor src = batch_ids(source, batch, true, text::Side::kPost);
    const auto result = method({src, max_length}).toTuple();
    const torch::Tensor ids = result->elements()[0].toTensor().to(torch::kInt64).contiguous();
    const torch::Tensor att = result->elements()[1].toTensor().to(torch::kFloat32).contiguous();
    const std::int64_t steps = ids.size(1), width = src.size(1);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Translation& t = out[static_cast<std::size_t>(position[static_cast<std::size_t>(batch[i])])];
      t.source_length = source.lengths[static_cast<std::size_t>(batch[i])];
      const std::int64_t* row = ids.data_ptr<std::int64_t>() + static_cast<std::int64_t>(i) * steps;
      for (std::int64_t step = 0; step < steps && row[step] != end_id && row[step] != 0; ++step) {
        t.ids.push_back(static_cast<std::int32_t>(row[step]));
        const float* a = att.data_ptr<float>() + (static_cast<std::int64_t>(i) * steps + step) * width;
        t.attention.insert(t.attention.end(), a, a + t.source_length);
      }
    }
  }
  model.train(was_training);
  return out;
}

std::string decode(const text::Tokenizer& target, const std::vector<std::int32_t>& ids) {
  std::string s;
  for (std::int32_t id : ids)
    if (auto w = target.index_word(id)) s += *w;
  return s;
}

namespace {
std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::max<std::size_t>(1, text::utf8_sequence_length(static_cast<unsigned char>(s[i])));
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}
}  // namespace

StringAccuracy string_accuracy(const std::vector<std::string>& predicted, const std::vector<std::string>& targets) {
  StringAccuracy a;
  if (predicted.empty()) return a;
  double exact = 0, right = 0, total = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    exact += predicted[i] == targets[i] ? 1 : 0;
    const auto p = code_points(predicted[i]), t = code_points(targets[i]);
    for (std::size_t k = 0; k < std::min(p.size(), t.size()); ++k) right += p[k] == t[k] ? 1 : 0;
    total += static_cast<double>(std::max(p.size(), t.size()));
  }
  a.exact_match = exact / static_cast<double>(predicted.size());
  a.char_accuracy = total > 0 ? right / total : 1.0;
  return a;
}

}  // namespace attn::train
