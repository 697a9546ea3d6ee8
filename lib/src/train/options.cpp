// The training settings' table (see options.h): each row binds a flag, its help, a JSON key and a field.
#include "attn/train/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "attn/io/json_like.h"

namespace attn::train {
namespace {

struct ScheduleName {
  LrSchedule schedule;
  const char* name;
};
constexpr ScheduleName kSchedules[] = {{LrSchedule::kConstant, "constant"},
                                       {LrSchedule::kReduceOnPlateau, "reduce-on-plateau"},
                                       {LrSchedule::kWarmupLinear, "warmup-linear"},
                                       {LrSchedule::kCosine, "cosine"}};

/// The key of a flag: its dashes as underscores (the one place this convention lives).
std::string key_of(const std::string& flag) {
  std::string key = flag;
  for (char& c : key) c = c == '-' ? '_' : c;
  return key;
}

// ---- A flag's text as the value of its field's type; errors name the flag ----

template <class T>
T parse_text(const std::string& text, const std::string& flag);

template <>
std::int64_t parse_text<std::int64_t>(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw std::invalid_argument("--" + flag + " must be a whole number, got '" + text + "'");
  return v;
}
template <>
int parse_text<int>(const std::string& text, const std::string& flag) {
  const std::int64_t v = parse_text<std::int64_t>(text, flag);
  if (v < INT32_MIN || v > INT32_MAX) throw std::invalid_argument("--" + flag + " is out of range, got '" + text + "'");
  return static_cast<int>(v);
}
template <>
std::uint64_t parse_text<std::uint64_t>(const std::string& text, const std::string& flag) {
  const std::int64_t v = parse_text<std::int64_t>(text, flag);
  if (v < 0) throw std::invalid_argument("--" + flag + " must be >= 0, got '" + text + "'");
  return static_cast<std::uint64_t>(v);
}
template <>
double parse_text<double>(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) throw std::invalid_argument("--" + flag + " must be a number, got '" + text + "'");
  return v;
}
template <>
std::string parse_text<std::string>(const std::string& text, const std::string&) {
  return text;
}
template <>
LrSchedule parse_text<LrSchedule>(const std::string& text, const std::string& flag) {
  return parse_lr_schedule(text, "--" + flag);
}

// ---- A default as --help prints it ----

template <class T>
std::string shown(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v.empty() ? "none" : v;
  } else if constexpr (std::is_same_v<T, LrSchedule>) {
    return lr_schedule_name(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  } else {
    return std::to_string(v);
  }
}

/// A row for a setting with a value. `model_default`: the registry's models set it (attn models).
template <class T>
TrainOption value(const std::string& flag, T TrainOptions::*field, const std::string& help, bool model_default = false,
                  std::function<std::string(const T&)> check = nullptr) {
  TrainOption o;
  o.flag = flag;
  o.key = key_of(flag);
  o.help = help + " (default: " + (model_default ? std::string("the model's") : shown(TrainOptions{}.*field)) + ")";
  o.get = [field](const TrainOptions& t) { return nlohmann::json(t.*field); };
  o.set = [field](TrainOptions& t, const nlohmann::json& j) { t.*field = j.get<T>(); };
  o.parse = [flag](const std::string& text) { return nlohmann::json(parse_text<T>(text, flag)); };
  if (check) o.check = [field, check](const TrainOptions& t) { return check(t.*field); };
  return o;
}

/// A row for an on/off setting given as a flag: --FLAG sets `field` to `on` (a negated flag, e.g.
/// --no-bucket, sets bucket to false and is keyed by the field's name).
TrainOption flag(const std::string& flag, const std::string& key, bool TrainOptions::*field, bool on, const std::string& help) {
  TrainOption o;
  o.flag = flag;
  o.key = key;
  o.help = help;
  o.kind = on ? TrainOption::Kind::kFlag : TrainOption::Kind::kNegatedFlag;
  o.get = [field](const TrainOptions& t) { return nlohmann::json(t.*field); };
  o.set = [field](TrainOptions& t, const nlohmann::json& j) { t.*field = j.get<bool>(); };
  o.parse = [on](const std::string&) { return nlohmann::json(on); };
  return o;
}

template <class T>
std::function<std::string(const T&)> at_least(T minimum, bool say_value = true) {
  return [minimum, say_value](const T& v) {
    return v >= minimum ? std::string() : "must be >= " + std::to_string(minimum) + (say_value ? ", got " + std::to_string(v) : "");
  };
}

}  // namespace

const char* lr_schedule_name(LrSchedule schedule) {
  for (const ScheduleName& s : kSchedules)
    if (s.schedule == schedule) return s.name;
  throw std::logic_error("lr_schedule_name: unknown schedule");
}

LrSchedule parse_lr_schedule(const std::string& name, const std::string& what) {
  for (const ScheduleName& s : kSchedules)
    if (name == s.name) return s.schedule;
  throw std::invalid_argument(what + " must be constant, reduce-on-plateau, warmup-linear or cosine, got '" + name + "'");
}

void to_json(nlohmann::json& j, LrSchedule schedule) { j = lr_schedule_name(schedule); }
void from_json(const nlohmann::json& j, LrSchedule& schedule) { schedule = parse_lr_schedule(j.get<std::string>(), "lr_schedule"); }

MonitorMode monitor_mode(const std::string& monitor) {
  const bool loss = monitor.size() >= 4 && monitor.compare(monitor.size() - 4, 4, "loss") == 0;
  return loss ? MonitorMode::kMinimize : MonitorMode::kMaximize;
}

const std::vector<TrainOption>& train_options() {
  static const std::vector<TrainOption> rows = [] {
    using T = TrainOptions;
    std::vector<TrainOption> r = {
        value("epochs", &T::epochs, "Epochs", true, at_least(1)),
        value("batch-size", &T::batch_size, "Rows per batch", true, at_least<std::int64_t>(1)),
        value("lr", &T::lr, "Adam learning rate; the peak of a schedule", true,
              std::function<std::string(const double&)>(
                  [](const double& v) { return v > 0 ? "" : "must be > 0, got " + std::to_string(v); })),
        value("val-split", &T::val_split, "Last fraction of the rows held out for validation", true,
              std::function<std::string(const double&)>(
                  [](const double& v) { return v >= 0 && v < 1 ? "" : "must be in [0, 1), got " + std::to_string(v); })),
        value("seed", &T::seed, "Random seed (same seed and threads, same metrics)"),
        flag("no-bucket", "bucket", &T::bucket, false, "Pad every batch to maxlen instead of bucketing rows by length (for comparison)"),
        flag(
            "no-sparse-gradients", "sparse_gradients", &T::sparse_gradients, false,
            "Data-parallel workers exchange an embedding's whole gradient each step, not just the rows the batch touched (for comparison)"),
        value("early-stopping-patience", &T::early_stopping_patience,
              "Stop after N epochs without improvement of --monitor; model.pt keeps the best epoch (0: never)", false, at_least(0, false)),
        value("monitor", &T::monitor,
              "Metric for early stopping and reduce-on-plateau: val_loss, val_mean_auc, val_macro_f1, val_accuracy, val_exact_match, loss, "
              "...",
              false, std::function<std::string(const std::string&)>([](const std::string& v) {
                return v.empty() ? "must name a metric, e.g. val_loss" : "";
              })),
        value("lr-schedule", &T::lr_schedule, "constant, reduce-on-plateau, warmup-linear or cosine"),
        value("lr-factor", &T::lr_factor, "reduce-on-plateau: multiply the learning rate by this", false,
              std::function<std::string(const double&)>(
                  [](const double& v) { return v > 0 && v < 1 ? "" : "must be in (0, 1), got " + std::to_string(v); })),
        value("lr-patience", &T::lr_patience, "reduce-on-plateau: epochs without improvement before reducing", false, at_least(1, false)),
        value("min-lr", &T::min_lr, "Lower bound of the schedules"),
        value("warmup-steps", &T::warmup_steps, "warmup-linear, cosine: steps of linear warm-up from 0", false,
              at_least<std::int64_t>(0, false)),
        value("clip-norm", &T::clip_norm, "Clip the gradients' global L2 norm to this (0: no clipping)", false,
              std::function<std::string(const double&)>([](const double& v) { return v >= 0 ? "" : "must be >= 0"; })),
        value("pos-weight", &T::pos_weight,
              "Classifiers: the positive class's loss weight per label, auto (negatives / positives over the training rows) or w1,w2,...; "
              "span taggers: a marked token's weight, auto (unmarked / marked tokens) or w (not with --set crf=true)"),
        value("class-weight", &T::class_weight,
              "Classifiers with one class per row: the loss weight per class, balanced (rows / (classes x the class's rows) over "
              "the training rows) or w1,w2,..."),
        value("span-f1-loss", &T::span_f1_loss,
              "Span taggers: each text adds W x (1 - the soft F1 of its marked tokens, from their probabilities) to the tokens' "
              "loss, weighed by its tokens (0: the tokens' loss alone; span taggers: 1)",
              false, std::function<std::string(const double&)>([](const double& v) {
                return v >= 0 && std::isfinite(v) ? "" : "must be a number >= 0, got " + std::to_string(v);
              })),
        value("embeddings", &T::embeddings,
              "Text models: start the word embedding from these vectors (word2vec / GloVe / fastText "
              "text format, .gz too)"),
        flag("freeze-embeddings", "freeze_embeddings", &T::freeze_embeddings, true, "Keep the --embeddings vectors fixed"),
        value("pretrain-epochs", &T::pretrain_epochs,
              "Text models read from a CSV: first learn the word vectors (with subwords, their n-gram rows) from the training file's "
              "own texts by skip-gram, this many passes at most (fewer when passes x the file's words would exceed 8 million; "
              "0: random vectors; one class per row read from a CSV: 20)",
              false, at_least(0, false)),
        value("logit-adjustment", &T::logit_adjustment,
              "One class per row: macro-f1 adds to each class's output bias the offset that, chosen on the held-out rows once "
              "training is done, maximises their macro-F1 (post-hoc logit adjustment); span taggers: span-f1 moves the "
              "threshold to maximise their character F1; or none (defaults: macro-f1, span-f1)",
              false, std::function<std::string(const std::string&)>([](const std::string& v) {
                return v == "none" || v == "macro-f1" || v == "span-f1" ? "" : "must be none, macro-f1 or span-f1, got '" + v + "'";
              })),
        value("ensemble", &T::ensemble,
              "bilstm-attention, hierarchical-attention: train N copies of the model side by side (each its own initial weights and "
              "dropout, each by its own loss, N times the training time) and save them as one model that averages their "
              "probabilities (a seed ensemble; one class per row: 3)",
              false, std::function<std::string(const int&)>([](const int& v) {
                return v >= 1 && v <= 64 ? "" : "must be in [1, 64], got " + std::to_string(v);
              })),
    };
    TrainOption threads = value("threads", &T::threads, "LibTorch's threads", false, at_least(1));
    threads.flag.clear();  // every app's --threads (apps/common), not a training flag of its own
    r.push_back(threads);
    return r;
  }();
  return rows;
}

void to_json(nlohmann::json& j, const TrainOptions& o) {
  j = nlohmann::json::object();
  for (const TrainOption& row : train_options()) j[row.key] = row.get(o);
}

void from_json(const nlohmann::json& j, TrainOptions& o) {
  for (const TrainOption& row : train_options())
    if (j.contains(row.key)) row.set(o, j.at(row.key));
}

void validate(const TrainOptions& o) {
  for (const TrainOption& row : train_options()) {
    if (!row.check) continue;
    const std::string wrong = row.check(o);
    if (!wrong.empty()) throw std::invalid_argument("--" + (row.flag.empty() ? row.key : row.flag) + " " + wrong);
  }
  if (!(o.min_lr >= 0 && o.min_lr <= o.lr)) throw std::invalid_argument("--min-lr must be in [0, --lr]");
  if (o.freeze_embeddings && o.embeddings.empty()) throw std::invalid_argument("--freeze-embeddings needs --embeddings");
  if (o.pretrain_epochs > 0 && !o.embeddings.empty()) throw std::invalid_argument("give one of --embeddings and --pretrain-epochs");
}

int pretrain_passes(const TrainOptions& o, std::int64_t words) {
  if (o.pretrain_epochs <= 0) return 0;
  const std::int64_t affordable = kPretrainWords / std::max<std::int64_t>(1, words);
  return static_cast<int>(std::clamp<std::int64_t>(affordable, 1, o.pretrain_epochs));
}

std::vector<data::InputSpec> training_inputs() {
  std::vector<data::InputSpec> specs;
  for (const TrainOption& row : train_options()) {
    if (row.flag.empty()) continue;
    const auto kind = row.kind == TrainOption::Kind::kValue ? data::InputSpec::Kind::kValue : data::InputSpec::Kind::kFlag;
    specs.push_back({row.flag, row.help, "", kind, "Training"});
  }
  return specs;
}

nlohmann::json training_overrides(const data::Inputs& in) {
  nlohmann::json j = nlohmann::json::object();
  for (const TrainOption& row : train_options())
    if (!row.flag.empty() && in.given(row.flag)) j[row.key] = row.parse(row.kind == TrainOption::Kind::kValue ? in.text(row.flag) : "");
  return j;
}

TrainOptions effective_options(const nlohmann::json& defaults, const nlohmann::json& overrides) {
  nlohmann::json j = TrainOptions{};
  for (const nlohmann::json* layer : {&defaults, &overrides})
    for (const auto& [key, value] : layer->items()) {
      if (!j.contains(key)) throw std::invalid_argument("no training setting '" + key + "'");
      j[key] = value;
    }
  TrainOptions o;
  try {
    o = io::get_like<TrainOptions>(j);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("training setting ") + e.what());
  }
  validate(o);
  return o;
}

std::string training_flags(const nlohmann::json& training) {
  std::string out;
  for (const TrainOption& row : train_options())
    if (!row.flag.empty() && training.contains(row.key)) out += " --" + row.flag + " " + training.at(row.key).dump();
  return out;
}

}  // namespace attn::train
