// Feature classification: everything attn knows about feature classifiers' data (see task.h).
#include "attn/tasks/feature_classification.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <torch/script.h>

#include "attn/data/tables.h"
#include "attn/metrics/metrics.h"
#include "attn/nn/script_module.h"
#include "attn/report/plots.h"
#include "classifier.h"
#include "task_support.h"

namespace attn::tasks {
namespace {

/// Probabilities [rows] and attention [rows, D] of a feature model over rows of `values` [rows, D].
std::pair<std::vector<float>, std::vector<float>> predict(torch::jit::Module& module, const std::vector<float>& values,
                                                          std::int64_t features, std::int64_t batch_size) {
  nn::EvalModeGuard eval(module);
  models::FeatureClassifier model(module);
  const std::int64_t n = features > 0 ? static_cast<std::int64_t>(values.size()) / features : 0;
  const torch::Tensor x = torch::from_blob(const_cast<float*>(values.data()), {n, features}, torch::kFloat32);
  std::vector<float> probs, attention;
  for (std::int64_t start = 0; start < n; start += batch_size) {
    const models::Scored out = model.forward(x.slice(0, start, std::min(n, start + batch_size)));
    const torch::Tensor p = out.scores.to(torch::kFloat32).contiguous(), a = out.attention.to(torch::kFloat32).contiguous();
    probs.insert(probs.end(), p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    attention.insert(attention.end(), a.data_ptr<float>(), a.data_ptr<float>() + a.numel());
  }
  return {probs, attention};
}

/// p of versions of rows of `values` [rows, D] with the features a version does not keep set to
/// their baseline: [versions].
std::vector<float> score_versions(torch::jit::Module& module, const std::vector<float>& values, const std::vector<float>& baseline,
                                  const std::vector<models::Version>& versions, std::int64_t batch_size) {
  const std::size_t d = baseline.size();
  std::vector<float> changed;
  changed.reserve(versions.size() * d);
  for (const models::Version& v : versions)
    for (std::size_t f = 0; f < d; ++f) changed.push_back(v.keep.at(f) ? values.at(static_cast<std::size_t>(v.row) * d + f) : baseline[f]);
  return predict(module, changed, static_cast<std::int64_t>(d), batch_size).first;
}

/// The scores of `options.methods` for rows of `values` [rows, D] against `baseline` [D] (the
/// driver's adapter): each feature a unit whose vector has one entry, one target, a removed feature
/// set to its baseline.
std::vector<models::RowImportance> feature_importance(torch::jit::Module& module, const std::vector<float>& values,
                                                      const std::vector<float>& attention, const std::vector<float>& baseline,
                                                      const models::ImportanceOptions& options) {
  const auto d = static_cast<std::int64_t>(baseline.size());
  const std::int64_t n = d > 0 ? static_cast<std::int64_t>(values.size()) / d : 0;
  models::FeatureClassifier model(module);
  models::ImportanceInputs in;
  in.module = module;
  in.targets = 1;
  in.width = d;
  in.units.assign(static_cast<std::size_t>(n), d);
  for (std::int64_t r = 0; r < n; ++r) in.attention.emplace_back(attention.begin() + r * d, attention.begin() + (r + 1) * d);
  in.embed = [&] {
    return std::make_pair(torch::tensor(values).view({n, d, 1}), torch::tensor(baseline).view({1, d, 1}).expand({n, d, 1}).contiguous());
  };
  in.z = [&](const torch::Tensor& points, const torch::Tensor&) { return model.logits(points.squeeze(-1)).scores; };
  in.erased = [&](const std::vector<models::Version>& v) { return score_versions(module, values, baseline, v, 512); };
  return models::importance(in, options);
}

/// A feature CSV's rows as faithfulness measures them: every feature a unit, a removed one set to
/// its baseline (the training mean, or 0 for models saved before attn 0.3).
class FeatureErasures : public Erasures {
 public:
  FeatureErasures(torch::jit::Module module, data::FeatureTable table, std::string label, std::vector<float> baseline, std::int64_t rows)
      : module_(std::move(module)), t_(std::move(table)), label_(std::move(label)), baseline_(std::move(baseline)) {
    if (t_.rows < rows)
      throw std::invalid_argument("--rows " + std::to_string(rows) + ": the file has only " + std::to_string(t_.rows) + " rows");
    if (baseline_.size() < 2) throw std::invalid_argument("faithfulness needs rows of at least 2 features");
    rows_ = rows;
  }
  std::vector<std::string> labels() const override { return {label_}; }
  std::int64_t size() const override { return rows_; }
  std::vector<AttributedRow> attribute(std::int64_t first, std::int64_t count, const std::vector<models::Method>& methods,
                                       int steps) override {
    const auto d = static_cast<std::int64_t>(baseline_.size());
    const std::vector<float> values(t_.values.begin() + first * d, t_.values.begin() + (first + count) * d);
    const auto [p, attention] = predict(module_, values, d, 512);
    models::ImportanceOptions options;
    options.methods = methods;
    options.steps = steps;
    const auto scores = feature_importance(module_, values, attention, baseline_, options);
    std::vector<AttributedRow> out;
    for (std::int64_t i = 0; i < count; ++i) {
      AttributedRow r{first + i + 1, "", d, {p[static_cast<std::size_t>(i)]}, {}};
      for (const models::MethodScores& m : scores[static_cast<std::size_t>(i)].methods) r.scores.push_back(m.scores);
      out.push_back(std::move(r));
    }
    return out;
  }
  std::vector<float> score(const std::vector<models::Version>& versions) override {
    return score_versions(module_, t_.values, baseline_, versions, 512);
  }

 private:
  torch::jit::Module module_;
  data::FeatureTable t_;
  std::string label_;
  std::vector<float> baseline_;
  std::int64_t rows_ = 0;
};

class FeatureDataset : public Dataset {
 public:
  FeatureDataset(data::FeatureTable table, FeatureDataConfig config) : t_(std::move(table)), config_(std::move(config)) {
    config_.rows = t_.rows;
    config_.features = t_.feature_names;
    if (!t_.label_name.empty()) config_.label = t_.label_name;
    lengths_.assign(static_cast<std::size_t>(t_.rows), 1);
    d_ = static_cast<std::int64_t>(t_.feature_names.size());
    x_ = torch::from_blob(t_.values.data(), {t_.rows, d_}, torch::kFloat32);
    if (!t_.labels.empty()) y_ = torch::from_blob(t_.labels.data(), {t_.rows, 1}, torch::kFloat32);
  }

  std::int64_t rows() const override { return t_.rows; }
  const std::vector<std::int64_t>& lengths() const override { return lengths_; }

  Batch batch(const std::vector<std::int64_t>& rows, Width) const override {
    const torch::Tensor index = torch::tensor(rows, torch::kInt64);
    Batch b;
    b.inputs = {x_.index_select(0, index)};
    if (y_.defined()) b.targets = y_.index_select(0, index);
    b.tokens = static_cast<std::int64_t>(rows.size()) * d_;
    return b;
  }

  Loss loss(torch::jit::Module& model, const Batch& b, const torch::Tensor& weights) const override {
    return binary_loss(models::FeatureClassifier(model).logits(b.inputs.at(0).toTensor()).scores, b.targets, weights);
  }

  std::vector<std::string> metric_names() const override { return classifier_metric_names(LabelKind::kIndependent); }

  Evaluation evaluate(torch::jit::Module& model, const std::vector<std::int64_t>& rows, const EvaluateOptions& options) const override {
    Evaluation out;
    if (rows.empty()) return out;
    std::vector<float> y;
    for (std::int64_t r : rows)
      if (!t_.labels.empty()) y.push_back(t_.labels[static_cast<std::size_t>(r)]);
    // Per row: the probability, then the d weights (gathered so, when validation is shared).
    const std::size_t d = static_cast<std::size_t>(d_);
    const std::vector<float> scored =
        score_shared(rows, lengths_, options.batch_size, options.sharing, [&](const std::vector<std::int64_t>& some) {
          std::vector<float> values, packed;
          for (std::int64_t r : some) values.insert(values.end(), t_.values.begin() + r * d_, t_.values.begin() + (r + 1) * d_);
          const auto [p, a] = predict(model, values, d_, options.batch_size);
          for (std::size_t i = 0; i < some.size(); ++i) {
            packed.push_back(p[i]);
            packed.insert(packed.end(), a.begin() + static_cast<std::ptrdiff_t>(i * d),
                          a.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
          }
          return packed;
        });
    std::vector<float> probs, attention;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      probs.push_back(scored[i * (d + 1)]);
      attention.insert(attention.end(), scored.begin() + static_cast<std::ptrdiff_t>(i * (d + 1) + 1),
                       scored.begin() + static_cast<std::ptrdiff_t>((i + 1) * (d + 1)));
    }
    std::vector<double> mean(static_cast<std::size_t>(d_), 0.0);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t f = 0; f < mean.size(); ++f) mean[f] += attention[i * mean.size() + f] / static_cast<double>(rows.size());
    if (!y.empty()) {
      out.metrics = classifier_metrics(probs, y, {}, {config_.label}, LabelKind::kIndependent, options.detail, thresholds_);
      nlohmann::ordered_json m = nlohmann::ordered_json::object();
      for (std::size_t f = 0; f < mean.size(); ++f) m[config_.features[f]] = mean[f];
      out.metrics["mean_attention"] = m;
    }
    if (options.detail == EvaluateOptions::Detail::kFull) {
      std::vector<std::string> keys;
      for (std::int64_t r : rows) keys.push_back(std::to_string(r + 1));
      out.predictions_csv = predictions_csv("row", keys, {"probability"}, probs, PredictionColumn::kPositive);
      out.svg = {report::svg_bar_chart("Mean attention per feature", config_.features, mean)};
    }
    return out;
  }

  nlohmann::json data_config() const override { return config_; }
  models::DataSizes sizes() const override {
    models::DataSizes s;
    s.features = d_;
    s.labels = 1;
    return s;
  }
  std::map<std::string, std::string> files() const override { return {}; }

  torch::Tensor loss_weights(const LossWeights& spec, const std::vector<std::int64_t>& rows) const override {
    return loss_weights_of(spec, LabelKind::kIndependent, t_.labels, 1, rows);
  }

  const FeatureDataConfig& config() const { return config_; }
  /// Decision threshold for precision, recall and F1 in a full evaluation.
  void set_thresholds(Thresholds thresholds) { thresholds_ = std::move(thresholds); }

 private:
  Thresholds thresholds_;
  data::FeatureTable t_;
  FeatureDataConfig config_;
  std::vector<std::int64_t> lengths_;
  std::int64_t d_ = 0;
  torch::Tensor x_, y_;
};

/// "v1,v2,...": one row of `n` finite numbers; a usage error otherwise.
std::vector<float> parse_row(const std::string& arg, std::size_t n) {
  const std::vector<std::string> fields = data::split_list(arg);
  if (fields.size() != n)
    throw std::invalid_argument("'" + arg + "': expected " + std::to_string(n) + " comma-separated values (" +
                                std::to_string(fields.size()) + " given)");
  std::vector<float> row;
  for (const std::string& f : fields) {
    char* end = nullptr;
    const double v = std::strtod(f.c_str(), &end);
    if (end == f.c_str() || *end != '\0' || !std::isfinite(v)) throw std::invalid_argument("'" + f + "' in '" + arg + "' is not a number");
    row.push_back(static_cast<float>(v));
  }
  return row;
}

/// What a feature model reads on the command line (train, explain), typed and read once.
struct FeatureInputs {
  data::Given<std::string> csv;
  data::Given<std::vector<std::string>> rows;  ///< explain's 1-based rows of --csv (default: row 1)
  data::Given<std::vector<std::string>> feature_columns;
  data::Given<std::string> label_column;  ///< (default: label)
};

const std::vector<data::Field<FeatureInputs>>& feature_input_fields() {
  using FI = FeatureInputs;
  static const std::vector<data::Field<FI>> table = {
      {explain_csv_input(), &FI::csv},
      {explain_rows_input(), &FI::rows},
      {{"feature-columns", "Feature models: feature columns (default: every column but the label and id)", ""}, &FI::feature_columns},
      {data::label_column_input(), &FI::label_column},
  };
  return table;
}

FeatureInputs read_feature_inputs(const data::Inputs& in) {
  FeatureInputs defaults;
  defaults.rows.value = {"1"};
  defaults.label_column.value = "label";
  return data::read_fields(in, feature_input_fields(), defaults);
}

/// The input of the table named `name`.
data::InputSpec feature_input(const std::string& name) {
  for (const data::Field<FeatureInputs>& f : feature_input_fields())
    if (f.spec.name == name) return f.spec;
  throw std::logic_error("feature_input: " + name);
}

class FeatureModel : public TrainedModel {
 public:
  explicit FeatureModel(models::SavedModel saved)
      : TrainedModel(std::move(saved)), config_(parse_data_config<FeatureDataConfig>(model_.config.at("data"), model_.path)) {
    if (config_.features.empty()) throw std::runtime_error(model_.path + ": embedded config.json: key 'data.features' is required");
  }

  std::vector<Input> read_inputs(const std::vector<std::string>& arguments, const data::Inputs& options,
                                 const std::function<std::vector<std::string>()>&) const override {
    const std::size_t d = config_.features.size();
    std::vector<Input> inputs;
    const FeatureInputs in = read_feature_inputs(options);
    if (in.csv.given) {
      if (!arguments.empty()) throw std::invalid_argument("give rows either as arguments or with --csv, not both");
      const data::FeatureTable t = data::read_feature_csv(in.csv.value, config_.features, config_.label, true);
      for (const std::string& r : in.rows.value) {
        char* end = nullptr;
        const long long row = std::strtoll(r.c_str(), &end, 10);
        if (r.empty() || *end != '\0' || row < 1 || row > t.rows)
          throw std::invalid_argument("--rows: row " + r + " is not in 1.." + std::to_string(t.rows));
        inputs.push_back({"", std::vector<float>(t.values.begin() + (row - 1) * static_cast<std::int64_t>(d),
                                                 t.values.begin() + row * static_cast<std::int64_t>(d))});
      }
      return inputs;
    }
    if (in.rows.given) throw std::invalid_argument("--rows needs --csv");
    for (const std::string& arg : arguments) inputs.push_back({"", parse_row(arg, d)});
    if (inputs.empty()) throw std::invalid_argument("give rows as VALUE,VALUE,... arguments or --csv FILE [--rows N,...]");
    return inputs;
  }

  std::vector<models::Method> methods() const override { return models::available_methods({true, false}); }

  std::vector<std::int64_t> units(const std::vector<Input>& inputs) const override {
    return std::vector<std::int64_t>(inputs.size(), static_cast<std::int64_t>(config_.features.size()));
  }
  std::int64_t most_units() const override { return static_cast<std::int64_t>(config_.features.size()); }

  std::unique_ptr<Explanations> explain(const std::vector<Input>& inputs, std::int64_t batch_size, const ExplainOptions& options) override {
    if (!options.label.empty() && options.label != config_.label)
      throw std::invalid_argument("--label: '" + options.label + "' is not this model's label (" + config_.label + ")");
    const auto d = static_cast<std::int64_t>(config_.features.size());
    const std::vector<float> values = values_of(inputs);
    const auto [probs, attention] = tasks::predict(module(), values, d, batch_size);
    std::vector<models::RowImportance> importance(inputs.size());
    if (!options.methods.empty()) importance = feature_importance(module(), values, attention, baseline(), importance_options(options));
    std::vector<report::FeatureExplanation> all;
    for (std::size_t r = 0; r < inputs.size(); ++r) {
      report::FeatureExplanation e;
      e.feature_names = config_.features;
      e.label_name = config_.label;
      e.values = inputs[r].values;
      e.probability = probs[r];
      e.attention.assign(attention.begin() + static_cast<std::ptrdiff_t>(r) * d,
                         attention.begin() + static_cast<std::ptrdiff_t>(r + 1) * d);
      store_importance(std::move(importance[r]), e.importance, e.integrated);
      if (!e.importance.empty()) {
        e.baseline = baseline();
        e.baseline_kind = config_.means.empty() ? "zero" : "training mean";
      }
      all.push_back(std::move(e));
    }
    return std::make_unique<ExplanationList<report::FeatureExplanation>>(std::move(all));
  }

  std::unique_ptr<Erasures> erasures(const std::string& csv, const data::Inputs&, std::int64_t rows, int) override {
    return std::make_unique<FeatureErasures>(module(), data::read_feature_csv(csv, config_.features, config_.label, true), config_.label,
                                             baseline(), rows);
  }

  ModelFacts facts() const override { return {ModelFacts::Input::kRows, {config_.label}, false}; }

  nlohmann::ordered_json describe() const override {
    nlohmann::ordered_json j;
    j["task"] = feature_classification().name();
    j["input"] = "rows";
    j["features"] = config_.features;
    j["label"] = config_.label;
    return j;
  }

  std::vector<std::string> examples() const override {
    if (!config_.examples.empty()) return config_.examples;
    std::string zeros = "0";
    for (std::size_t f = 1; f < config_.features.size(); ++f) zeros += ",0";
    return {zeros};
  }

  void check(const std::vector<Input>& inputs) const override { values_of(inputs); }

  std::vector<nlohmann::ordered_json> predict(const std::vector<Input>& inputs, std::int64_t batch_size) override {
    const auto probs = tasks::predict(module(), values_of(inputs), static_cast<std::int64_t>(config_.features.size()), batch_size).first;
    std::vector<nlohmann::ordered_json> out;
    for (float p : probs) out.push_back({{"probability", p}, {"label", config_.label}});
    return out;
  }

  std::unique_ptr<Dataset> open_csv(const std::string& csv, const data::Inputs& options, int) const override {
    const Thresholds thresholds(options, 1);  // checked before the work
    FeatureDataConfig config = config_;
    config.csv = csv;
    auto dataset = std::make_unique<FeatureDataset>(data::read_feature_csv(csv, config_.features, config_.label, true), config);
    dataset->set_thresholds(thresholds);
    return dataset;
  }

 private:
  /// The inputs' rows, row-major; a row of another width is a usage error.
  std::vector<float> values_of(const std::vector<Input>& inputs) const {
    const std::size_t d = config_.features.size();
    std::vector<float> values;
    for (const Input& in : inputs) {
      if (in.values.size() != d)
        throw std::invalid_argument("a row needs " + std::to_string(d) + " feature values, got " + std::to_string(in.values.size()));
      for (float v : in.values)
        if (!std::isfinite(v)) throw std::invalid_argument("feature values must be finite numbers");
      values.insert(values.end(), in.values.begin(), in.values.end());
    }
    return values;
  }

  /// What a removed feature is set to: the training mean (models saved before attn 0.3: 0).
  std::vector<float> baseline() const {
    return config_.means.size() == config_.features.size() ? config_.means : std::vector<float>(config_.features.size(), 0.0f);
  }

  FeatureDataConfig config_;
};

class FeatureClassification : public Task {
 public:
  const char* name() const override { return "feature-classification"; }

  ForCommand for_command(Command command) const override {
    switch (command) {
      case Command::kTrain:
        return {"a CSV's numeric feature columns (--feature-columns) and one 0/1 label column (--label-column)",
                {csv_input("CSV with a header row"), val_csv_input(), feature_input("feature-columns"), feature_input("label-column")}};
      case Command::kExplain:
        return {"the probability and every feature's weight; rows as VALUE,VALUE,... or --csv with --rows",
                {feature_input("csv"), feature_input("rows"), svg_input()}};
      case Command::kEvaluate:
        return {"a probability per row; with labels ROC AUC, loss, accuracy and the mean attention per feature (--svg)",
                {csv_input("CSV to score"),
                 thresholds_input(),
                 {"svg", "Feature models: draw the mean attention per feature (seed 001's chart) here", "", data::InputSpec::Kind::kValue,
                  "Output"}}};
      case Command::kFaithfulness:
        return {"each method's top features set to their training mean, or only they kept", {}};
      case Command::kExport:
        return {"forward(x) -> (probability, attention)", {}};
      default:
        return texts_only(command);
    }
  }

  std::unique_ptr<Dataset> open(const data::Inputs& in, const models::ModelEntry&, const std::string& run_dir, int) const override {
    const FeatureInputs given = read_feature_inputs(in);
    if (!given.csv.given) throw std::invalid_argument("--csv is required");
    const std::string csv = given.csv.value;
    data::FeatureTable t = data::read_feature_csv(csv, given.feature_columns.value, given.label_column.value);
    if (t.rows == 0) throw std::runtime_error(csv + ": no data rows");
    if (t.labels.empty()) throw std::runtime_error(csv + ": no label column");
    FeatureDataConfig config;
    for (std::int64_t r = 0; r < std::min<std::int64_t>(2, t.rows); ++r) {  // the explain page's examples
      std::string row;
      for (std::size_t f = 0; f < t.feature_names.size(); ++f) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.4g", f ? "," : "", t.values[static_cast<std::size_t>(r) * t.feature_names.size() + f]);
        row += buf;
      }
      config.examples.push_back(row);
    }
    const std::size_t d = t.feature_names.size();
    std::vector<double> sums(d, 0.0);
    for (std::int64_t r = 0; r < t.rows; ++r)
      for (std::size_t f = 0; f < d; ++f) sums[f] += t.values[static_cast<std::size_t>(r) * d + f];
    for (double s : sums) config.means.push_back(static_cast<float>(s / static_cast<double>(t.rows)));
    config.csv = keep_copy(csv, run_dir);
    return std::make_unique<FeatureDataset>(std::move(t), config);
  }

  std::unique_ptr<Dataset> reopen(const nlohmann::json& data_config, const std::string& run_dir, int) const override {
    const auto config = parse_data_config<FeatureDataConfig>(data_config, run_dir + "/config.json");
    return std::make_unique<FeatureDataset>(data::read_feature_csv(config.csv, config.features, config.label), config);
  }

  std::unique_ptr<Dataset> open_validation(const std::string& csv, const Dataset& training, const std::string& run_dir,
                                           int) const override {
    FeatureDataConfig config = dynamic_cast<const FeatureDataset&>(training).config();
    data::FeatureTable t = data::read_feature_csv(csv, config.features, config.label);
    if (t.rows == 0) throw std::runtime_error(csv + ": no data rows");
    config.csv = keep_copy(csv, run_dir, "validation.csv");
    return std::make_unique<FeatureDataset>(std::move(t), config);
  }

  std::unique_ptr<TrainedModel> use(models::SavedModel model) const override { return std::make_unique<FeatureModel>(std::move(model)); }
};

}  // namespace

const Task& feature_classification() {
  static const FeatureClassification task;
  return task;
}

}  // namespace attn::tasks
