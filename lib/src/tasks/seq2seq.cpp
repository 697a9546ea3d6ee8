// Sequence to sequence: everything attn knows about seq2seq models' data (see task.h).
#include "attn/tasks/seq2seq.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <torch/script.h>

#include "attn/data/tables.h"
#include "attn/io/atomic_file.h"
#include "attn/metrics/metrics.h"
#include "attn/nn/script_module.h"
#include "attn/text/csv.h"
#include "attn/text/tokenizer.h"
#include "task_support.h"

namespace attn::tasks {
namespace {

namespace fs = std::filesystem;

/// The cross-entropy of the target characters, padding (id 0) ignored: torch::nn::functional's, from
/// ATen directly (the C++ frontend's header costs seconds a compile).
torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets, int64_t reduction) {
  return at::cross_entropy_loss(logits, targets, {}, reduction, /*ignore_index=*/0);
}

enum class Side { kSource, kTarget };

/// Characters, case-folded on the source side (dates come in random case), as typed on the target.
text::TokenizerOptions char_tokenizer(Side side) {
  text::TokenizerOptions o;
  o.char_level = true;
  o.lower = side == Side::kSource;
  if (side == Side::kSource) o.oov_token = "<unk>";  // an unseen source character still takes a position
  return o;
}

/// Character ids: the source tokenizer's (post-padded), and the target's followed by the end id
/// (target tokenizer size + 1; the start id is one more).
struct EncodedPairs {
  text::PaddedSequences source, target;  ///< target empty without targets
  std::int32_t end_id = 0, start_id = 0;
};

EncodedPairs encode(const data::PairTable& pairs, const text::Tokenizer& source, const text::Tokenizer& target, int threads) {
  EncodedPairs e;
  text::PadOptions pad;
  pad.padding = pad.truncating = text::Side::kPost;
  e.source = text::pad_sequences(source.texts_to_sequences(pairs.sources, threads), pad);
  e.end_id = target.vocabulary_size() + 1;
  e.start_id = e.end_id + 1;
  if (!pairs.targets.empty()) {
    std::vector<text::Sequence> t = target.texts_to_sequences(pairs.targets, threads);
    for (auto& seq : t) seq.push_back(e.end_id);
    e.target = text::pad_sequences(t, pad);
  }
  return e;
}

/// A greedy translation: output ids (up to, not including, the end id) and the attention
/// [output length, source length] row-major.
struct Translation {
  std::vector<std::int32_t> ids;
  std::vector<float> attention;
};

/// Greedy decoding (beam 1) or beam search, in length-bucketed batches.
std::vector<Translation> translate(torch::jit::Module& module, const text::PaddedSequences& source, const std::vector<std::int64_t>& rows,
                                   std::int64_t batch_size, std::int64_t beam) {
  nn::EvalModeGuard eval(module);
  models::Seq2SeqModel model(module);
  const std::int64_t end_id = model.end_id(), max_length = model.max_output_length();
  std::vector<Translation> out(rows.size());
  for_each_bucket(rows, source.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor src = batch_ids(source, batch, Width::kLongestRow, text::Side::kPost);
    const models::Scored result = beam > 1 ? model.beam_search(src, beam, max_length) : model.translate(src, max_length);
    const torch::Tensor ids = result.scores.to(torch::kInt64).contiguous(), att = result.attention.to(torch::kFloat32).contiguous();
    const std::int64_t steps = ids.size(1), width = src.size(1);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Translation& t = out[at[i]];
      const std::int64_t length = source.lengths[static_cast<std::size_t>(batch[i])];
      const std::int64_t* row = ids.data_ptr<std::int64_t>() + static_cast<std::int64_t>(i) * steps;
      for (std::int64_t step = 0; step < steps && row[step] != end_id && row[step] != 0; ++step) {
        t.ids.push_back(static_cast<std::int32_t>(row[step]));
        const float* a = att.data_ptr<float>() + (static_cast<std::int64_t>(i) * steps + step) * width;
        t.attention.insert(t.attention.end(), a, a + length);
      }
    }
  });
  return out;
}

/// The string of output ids (the target tokenizer's characters, concatenated).
std::string decode(const text::Tokenizer& target, const std::vector<std::int32_t>& ids) {
  std::string s;
  for (std::int32_t id : ids)
    if (auto w = target.index_word(id)) s += *w;
  return s;
}

class Seq2SeqDataset : public Dataset {
 public:
  Seq2SeqDataset(data::PairTable pairs, text::Tokenizer source, text::Tokenizer target, Seq2SeqDataConfig config, int threads)
      : pairs_(std::move(pairs)), source_(std::move(source)), target_(std::move(target)), config_(std::move(config)) {
    enc_ = encode(pairs_, source_, target_, threads);
    std::int64_t longest_target = 0;
    for (auto l : enc_.target.lengths) longest_target = std::max(longest_target, l);
    config_.rows = enc_.source.rows;
    config_.max_source_length = enc_.source.cols;
    if (!pairs_.targets.empty()) config_.max_target_length = longest_target - 1;  // without the end id
  }

  std::int64_t rows() const override { return enc_.source.rows; }
  const std::vector<std::int64_t>& lengths() const override { return enc_.source.lengths; }

  Batch batch(const std::vector<std::int64_t>& rows, Width width) const override {
    Batch b;
    const torch::Tensor src = batch_ids(enc_.source, rows, width, text::Side::kPost);
    b.inputs = {src};
    b.tokens = src.numel();
    if (pairs_.targets.empty()) return b;
    const torch::Tensor out = batch_ids(enc_.target, rows, width, text::Side::kPost);  // y_1 .. y_n, end
    torch::Tensor in = torch::full_like(out, enc_.start_id);                           // start, y_1 .. y_n
    if (out.size(1) > 1) in.slice(1, 1).copy_(out.slice(1, 0, out.size(1) - 1));
    b.inputs.push_back(in);
    b.targets = out;
    return b;
  }

  std::vector<std::string> metric_names() const override { return {"loss", "accuracy", "exact_match", "char_accuracy"}; }

  Loss loss(torch::jit::Module& model, const Batch& b, const torch::Tensor&) const override {
    const torch::Tensor logits = models::Seq2SeqModel(model).logits(b.inputs.at(0).toTensor(), b.inputs.at(1).toTensor()).scores;
    const torch::Tensor flat = logits.reshape({-1, logits.size(-1)}), y = b.targets.reshape({-1});
    const torch::Tensor loss = cross_entropy(flat, y, at::Reduction::Mean);
    torch::NoGradGuard no_grad;
    const torch::Tensor real = y != 0;
    return {loss, (flat.argmax(-1).eq(y) & real).sum().item<double>() / std::max(1.0, real.sum().item<double>())};
  }

  /// The loss is a mean over target characters (the end included): a share carries its characters.
  double share_of_loss(const std::vector<std::int64_t>& share, const std::vector<std::int64_t>& batch) const override {
    const auto characters = [&](const std::vector<std::int64_t>& rows) {
      double n = 0;
      for (std::int64_t r : rows) n += static_cast<double>(enc_.target.lengths[static_cast<std::size_t>(r)]);
      return n;
    };
    const double all = characters(batch);
    return all > 0 ? characters(share) / all : 0.0;
  }

  Evaluation evaluate(torch::jit::Module& module, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const override {
    Evaluation out;
    if (rows.empty()) return out;
    const bool have_targets = !pairs_.targets.empty(), full = options.detail == EvaluateOptions::Detail::kFull;
    parallel::SharedScoring shared = shared_scoring(rows, enc_.source.lengths, options.batch_size, options.sharing);
    std::vector<std::string> predicted;  // with Detail::kFull: the outputs of this worker's share, then of every row
    if (have_targets) {
      const std::vector<float> t = shared.scores(
          [&](const std::vector<std::int64_t>& some) { return tallies(module, some, options.batch_size, full ? &predicted : nullptr); });
      double sum[kTally] = {};
      for (std::size_t i = 0; i < t.size(); ++i) sum[i % kTally] += t[i];
      out.metrics["loss"] = sum[0] / std::max(1.0, sum[2]);
      out.metrics["accuracy"] = sum[1] / std::max(1.0, sum[2]);
      out.metrics["exact_match"] = sum[3] / static_cast<double>(rows.size());
      out.metrics["char_accuracy"] = sum[5] > 0 ? sum[4] / sum[5] : 1.0;
      if (beam_ > 1) out.metrics["beam"] = beam_;  // the decoding exact_match and char_accuracy measure
      out.metrics["rows"] = static_cast<std::int64_t>(rows.size());
      out.metrics["rows_skipped"] = 0;
    } else if (full) {
      shared.scores([&](const std::vector<std::int64_t>& some) {
        for (const Translation& t : translate(module, enc_.source, some, options.batch_size, beam_))
          predicted.push_back(decode(target_, t.ids));
        return std::vector<float>(some.size(), 0.0f);  // the outputs are gathered as texts below
      });
    }
    if (full) predicted = shared.texts(predicted);
    if (full) {
      std::string& csv = out.predictions_csv;
      csv = have_targets ? "source,target,prediction\n" : "source,prediction\n";
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto r = static_cast<std::size_t>(rows[i]);
        csv += text::csv_quote(pairs_.sources[r]) + "," + (have_targets ? text::csv_quote(pairs_.targets[r]) + "," : std::string()) +
               text::csv_quote(predicted[i]) + "\n";
      }
    }
    return out;
  }

  /// Per row of `rows`, kTally values: the teacher-forced cross-entropy summed over its target
  /// characters, its correctly predicted next characters, its target characters, and its decoded
  /// output's exact match, right characters and length against the target (string_tally).
  static constexpr std::size_t kTally = 6;
  std::vector<float> tallies(torch::jit::Module& module, const std::vector<std::int64_t>& rows, std::int64_t batch_size,
                             std::vector<std::string>* predicted) const {
    std::vector<float> t(rows.size() * kTally, 0.0f);
    const std::vector<Translation> translated = translate(module, enc_.source, rows, batch_size, beam_);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::string output = decode(target_, translated[i].ids);
      const metrics::StringTally s = metrics::string_tally(output, pairs_.targets[static_cast<std::size_t>(rows[i])]);
      t[i * kTally + 3] = static_cast<float>(s.exact), t[i * kTally + 4] = static_cast<float>(s.right),
                     t[i * kTally + 5] = static_cast<float>(s.total);
      if (predicted) predicted->push_back(std::move(output));
    }
    nn::EvalModeGuard eval(module);
    torch::NoGradGuard no_grad;
    models::Seq2SeqModel model(module);
    for_each_bucket(rows, enc_.source.lengths, batch_size,
                    [&](const std::vector<std::int64_t>& rows_b, const std::vector<std::size_t>& at) {
                      const Batch b = batch(rows_b, Width::kLongestRow);
                      const torch::Tensor logits = model.logits(b.inputs.at(0).toTensor(), b.inputs.at(1).toTensor()).scores;
                      const auto n = static_cast<std::int64_t>(rows_b.size());
                      const torch::Tensor flat = logits.reshape({-1, logits.size(-1)}), y = b.targets.reshape({-1});
                      const torch::Tensor real = y != 0;
                      const torch::Tensor loss = cross_entropy(flat, y, at::Reduction::None).reshape({n, -1}).sum(1);
                      const torch::Tensor correct = (flat.argmax(-1).eq(y) & real).reshape({n, -1}).sum(1).to(torch::kFloat32);
                      const torch::Tensor chars = real.reshape({n, -1}).sum(1).to(torch::kFloat32);
                      for (std::int64_t j = 0; j < n; ++j) {
                        float* row = t.data() + at[static_cast<std::size_t>(j)] * kTally;
                        row[0] = loss[j].item<float>(), row[1] = correct[j].item<float>(), row[2] = chars[j].item<float>();
                      }
                    });
    return t;
  }

  nlohmann::json data_config() const override { return config_; }

  models::DataSizes sizes() const override {
    models::DataSizes s;
    s.vocabulary = source_.vocabulary_size() + 2;  // padding, the characters (the OOV one included), one spare
    s.target_vocabulary = enc_.start_id + 1;       // padding, the characters, end, start
    s.input_length = enc_.source.cols;
    s.output_length = config_.max_target_length;
    return s;
  }

  std::map<std::string, std::string> files() const override {
    return {{"tokenizer.json", source_.to_json()}, {"target_tokenizer.json", target_.to_json()}};
  }

  const Seq2SeqDataConfig& config() const { return config_; }
  /// Decode by beam search with this many hypotheses (1: greedy).
  void set_beam(std::int64_t beam) { beam_ = beam; }
  const text::Tokenizer& source_tokenizer() const { return source_; }
  const text::Tokenizer& target_tokenizer() const { return target_; }

 private:
  data::PairTable pairs_;
  text::Tokenizer source_, target_;
  Seq2SeqDataConfig config_;
  EncodedPairs enc_;
  std::int64_t beam_ = 1;
};

/// What a seq2seq model reads on the command line (train, evaluate, explain), typed and read once.
struct Seq2SeqInputs {
  data::Given<std::string> csv;
  data::Given<std::int64_t> beam;
  data::Given<std::string> source_column, target_column;
};

data::InputSpec beam_input();

const std::vector<data::Field<Seq2SeqInputs>>& seq2seq_input_fields() {
  using SI = Seq2SeqInputs;
  static const std::vector<data::Field<SI>> table = {
      {csv_input("CSV with a header row"), &SI::csv},
      {beam_input(), &SI::beam},
      {{"source-column", "Seq2seq models: the input strings", "source"}, &SI::source_column},
      {{"target-column", "Seq2seq models: the output strings", "target"}, &SI::target_column},
  };
  return table;
}

/// `in` read, the columns `source` and `target` unless it gives them.
Seq2SeqInputs read_seq2seq_inputs(const data::Inputs& in, const std::string& source, const std::string& target) {
  Seq2SeqInputs defaults;
  defaults.beam.value = 1;
  defaults.source_column.value = source;
  defaults.target_column.value = target;
  return data::read_fields(in, seq2seq_input_fields(), defaults);
}

class Seq2SeqTrainedModel : public TrainedModel {
 public:
  explicit Seq2SeqTrainedModel(models::SavedModel saved)
      : TrainedModel(std::move(saved)),
        config_(parse_data_config<Seq2SeqDataConfig>(model_.config.at("data"), model_.path)),
        source_(embedded_tokenizer(model_, "tokenizer.json")),
        target_(embedded_tokenizer(model_, "target_tokenizer.json")) {}

  std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs&,
                                 const std::function<std::vector<std::string>()>& stdin_lines) const override {
    return text_inputs(arguments, stdin_lines);
  }

  std::int64_t targets() const override { return std::max<std::int64_t>(1, config_.max_target_length); }

  std::vector<std::int64_t> units(const std::vector<Input>& inputs) const override {  // the characters (UTF-8 lead bytes)
    std::vector<std::int64_t> out;
    for (const Input& in : inputs)
      out.push_back(std::count_if(in.text.begin(), in.text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    return out;
  }

  std::vector<models::Method> methods() const override {
    return models::available_methods({models::Seq2SeqModel(model_.module).has_embedded(), false});
  }

  std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size, const ExplainOptions& options) override {
    if (!options.label.empty()) throw std::invalid_argument("--label is for classifiers: a seq2seq model explains each output character");
    const EncodedPairs enc = encode(sources_of(inputs), source_, target_, 1);
    const std::vector<Translation> out = translate(module(), enc.source, all_rows(enc.source.rows), batch_size, beam_);
    std::vector<report::AlignmentExplanation> all;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      report::AlignmentExplanation e;
      e.source = inputs[i].text;
      const std::int32_t* ids = enc.source.ids.data() + i * static_cast<std::size_t>(enc.source.cols);
      for (std::int64_t c = 0; c < enc.source.lengths[i]; ++c) e.source_tokens.push_back(source_.index_word(ids[c]).value_or("?"));
      for (std::int32_t id : out[i].ids) e.output_tokens.push_back(target_.index_word(id).value_or("?"));
      e.output = decode(target_, out[i].ids);
      e.attention = out[i].attention;
      if (!options.methods.empty())
        add_importance(std::vector<std::int64_t>(ids, ids + enc.source.lengths[i]), out[i], enc.start_id, options, e);
      all.push_back(std::move(e));
    }
    return std::make_unique<ExplanationList<report::AlignmentExplanation>>(std::move(all));
  }

  ModelFacts facts() const override { return {ModelFacts::Input::kTexts, {}, false}; }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["task"] = seq2seq().name();
    j["input"] = "texts";
    j["source_column"] = config_.source_column;
    j["target_column"] = config_.target_column;
    return j;
  }

  std::vector<std::string> examples() const override {
    return config_.examples;  // (none in models saved before the examples were)
  }

  void check(const std::vector<Input>& inputs) const override { check_texts(inputs); }

  void configure(const data::Inputs& options) override {
    const Seq2SeqInputs in = read_seq2seq_inputs(options, config_.source_column, config_.target_column);
    if (!in.beam.given) return;
    beam_ = in.beam.value;
    if (beam_ < 1) throw std::invalid_argument("--beam must be >= 1");
  }

  std::vector<nlohmann::ordered_json> predict(const std::vector<Input>& inputs, std::int64_t batch_size) override {
    const EncodedPairs enc = encode(sources_of(inputs), source_, target_, 1);
    std::vector<nlohmann::ordered_json> out;
    for (const Translation& t : translate(module(), enc.source, all_rows(enc.source.rows), batch_size, beam_))
      out.push_back({{"output", decode(target_, t.ids)}});
    return out;
  }

  std::unique_ptr<Dataset> open_csv(const std::string& csv, const data::Inputs& options, int threads) const override {
    Seq2SeqDataConfig config = config_;
    config.csv = csv;
    const Seq2SeqInputs in = read_seq2seq_inputs(options, config_.source_column, config_.target_column);
    config.source_column = in.source_column.value;
    config.target_column = in.target_column.value;
    data::PairTable pairs = data::read_pair_csv(csv, config.source_column, config.target_column, true);
    auto dataset = std::make_unique<Seq2SeqDataset>(std::move(pairs), source_, target_, config, threads);
    dataset->set_beam(beam_);
    return dataset;
  }

 private:
  std::int64_t beam_ = 1;

  /// The scores of options.methods for one input (inseq's view; the driver's adapter): per produced
  /// character y_j, over the source characters, of log p(y_j | y_<j, x) with the decoder fed the
  /// produced output (the gradient methods) or of p(y_j | ...) (leave-one-out: the source without
  /// the character). One input at a time: each has its own number of targets.
  void add_importance(const std::vector<std::int64_t>& source, const Translation& produced, std::int64_t start_id,
                      const ExplainOptions& options, report::AlignmentExplanation& e) {
    const auto S = static_cast<std::int64_t>(source.size()), K = static_cast<std::int64_t>(produced.ids.size());
    models::Seq2SeqModel model(module());
    models::ImportanceInputs in;
    in.module = module();
    in.targets = K;
    in.width = S;
    in.units = {S};
    in.attention = {e.attention};
    in.attention_per_target = true;
    torch::Tensor src, target_in, target;
    if (K > 0 && S > 0) {  // (the driver runs nothing for an empty source or output)
      src = torch::tensor(source, torch::kInt64).view({1, S});
      std::vector<std::int64_t> fed = {start_id}, out_ids(produced.ids.begin(), produced.ids.end());
      fed.insert(fed.end(), out_ids.begin(), out_ids.end() - 1);
      target_in = torch::tensor(fed, torch::kInt64).view({1, K});
      target = torch::tensor(out_ids, torch::kInt64).view({1, K, 1});
    }
    // log p(y_j) of each produced character, for sources x [N, S', E] of `sources` [N, S'].
    const auto log_p = [&](const torch::Tensor& x, const torch::Tensor& sources) {
      const torch::Tensor logits = model.logits_embedded(x, sources, target_in.expand({x.size(0), K})).scores;  // [N, K, V]
      return torch::log_softmax(logits, -1).gather(2, target.expand({x.size(0), K, 1})).squeeze(2);
    };
    in.embed = [&] { return std::make_pair(model.source_embeddings(src), torch::Tensor()); };
    in.z = [&](const torch::Tensor& points, const torch::Tensor&) { return log_p(points, src.expand({points.size(0), S})); };
    in.erased = [&](const std::vector<models::Version>& versions) {
      std::vector<text::Sequence> kept(versions.size());
      for (std::size_t v = 0; v < versions.size(); ++v)
        for (std::int64_t t = 0; t < S; ++t)
          if (versions[v].keep[static_cast<std::size_t>(t)])
            kept[v].push_back(static_cast<std::int32_t>(source[static_cast<std::size_t>(t)]));
      text::PadOptions pad;
      pad.padding = pad.truncating = text::Side::kPost;
      const text::PaddedSequences x = text::pad_sequences(kept, pad);
      const torch::Tensor sources = batch_ids(x, all_rows(x.rows), Width::kLongestRow, text::Side::kPost);
      const torch::Tensor p = log_p(model.source_embeddings(sources), sources).exp().to(torch::kFloat32).contiguous();
      return std::vector<float>(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    };
    std::vector<models::RowImportance> scored = models::importance(in, importance_options(options));
    store_importance(std::move(scored.front()), e.importance, e.integrated);
  }

  static data::PairTable sources_of(const std::vector<Input>& inputs) {
    data::PairTable pairs;
    for (const Input& in : inputs) pairs.sources.push_back(in.text);
    return pairs;
  }

  Seq2SeqDataConfig config_;
  text::Tokenizer source_, target_;
};

data::InputSpec beam_input() {
  return {"beam",
          "Seq2seq models: beam search with this many hypotheses, the best by mean log-probability per character "
          "(default 1: greedy)",
          ""};
}

class Seq2Seq : public Task {
 public:
  const char* name() const override { return "seq2seq"; }

  ForCommand for_command(Command command) const override {
    switch (command) {
      case Command::kTrain:
        return {"a CSV's source and target columns (--source-column, --target-column), character by character",
                {csv_input("CSV with a header row"), val_csv_input(), seq2seq_input_fields()[2].spec, seq2seq_input_fields()[3].spec}};
      case Command::kExplain:
        return {"the output and its attention matrix (output x input characters); --beam K decodes by beam search",
                {svg_input(), beam_input()}};
      case Command::kEvaluate:
        return {"the outputs; with targets exact match and character accuracy",
                {csv_input("CSV to score"),
                 beam_input(),
                 {"source-column", "Seq2seq models: the input column (default: the training run's)", ""},
                 {"target-column", "Seq2seq models: the expected-output column (default: the training run's)", ""}}};
      case Command::kFaithfulness:
        return {"not measured (its outputs are not class probabilities to erase from)", {}};
      case Command::kExport:
        return {"translate(src, max_length) and beam_search(src, beam, max_length) -> (ids, attention)", {}};
      default:
        return texts_only(command);
    }
  }

  std::unique_ptr<Dataset> open(const data::Inputs& in, const models::ModelEntry&, const std::string& run_dir, int threads) const override {
    const Seq2SeqInputs given = read_seq2seq_inputs(in, "source", "target");
    if (!given.csv.given) throw std::invalid_argument("--csv is required");
    const std::string csv = given.csv.value;
    Seq2SeqDataConfig config;
    config.source_column = given.source_column.value;
    config.target_column = given.target_column.value;
    data::PairTable pairs = data::read_pair_csv(csv, config.source_column, config.target_column);
    if (pairs.sources.empty()) throw std::runtime_error(csv + ": no data rows");
    text::Tokenizer source(char_tokenizer(Side::kSource)), target(char_tokenizer(Side::kTarget));
    source.fit_on_texts(pairs.sources, threads);
    target.fit_on_texts(pairs.targets, threads);
    for (std::size_t r = 0; r < std::min<std::size_t>(3, pairs.sources.size()); ++r) config.examples.push_back(pairs.sources[r]);
    config.csv = keep_copy(csv, run_dir);
    return std::make_unique<Seq2SeqDataset>(std::move(pairs), std::move(source), std::move(target), config, threads);
  }

  std::unique_ptr<Dataset> reopen(const nlohmann::json& data_config, const std::string& run_dir, int threads) const override {
    const auto config = parse_data_config<Seq2SeqDataConfig>(data_config, run_dir + "/config.json");
    data::PairTable pairs = data::read_pair_csv(config.csv, config.source_column, config.target_column);
    return std::make_unique<Seq2SeqDataset>(std::move(pairs), read_tokenizer((fs::path(run_dir) / "tokenizer.json").string()),
                                            read_tokenizer((fs::path(run_dir) / "target_tokenizer.json").string()), config, threads);
  }

  std::unique_ptr<Dataset> open_validation(const std::string& csv, const Dataset& training, const std::string& run_dir,
                                           int threads) const override {
    const auto& train = dynamic_cast<const Seq2SeqDataset&>(training);
    Seq2SeqDataConfig config = train.config();
    data::PairTable pairs = data::read_pair_csv(csv, config.source_column, config.target_column);
    if (pairs.sources.empty()) throw std::runtime_error(csv + ": no data rows");
    config.csv = keep_copy(csv, run_dir, "validation.csv");
    config.examples.clear();
    return std::make_unique<Seq2SeqDataset>(std::move(pairs), train.source_tokenizer(), train.target_tokenizer(), config, threads);
  }

  std::unique_ptr<TrainedModel> use(models::SavedModel model) const override {
    return std::make_unique<Seq2SeqTrainedModel>(std::move(model));
  }
};

}  // namespace

const Task& seq2seq() {
  static const Seq2Seq task;
  return task;
}

}  // namespace attn::tasks
