// `attn robustness` (see robustness.h).
#include "attn/analyses/robustness.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "attn/data/rationales.h"
#include "attn/io/atomic_file.h"
#include "attn/tasks/task.h"

namespace attn::analyses {

using namespace tasks;  // the task interface (tasks/task.h) the analyses drive
namespace {

/// The metrics a drop is reported for, as the model's evaluation names them.
const char* const kHeadline[] = {"accuracy", "macro_f1", "ovo_auc", "mean_auc"};

/// Each row's decision: the most probable class (one class per row), or which labels have p >= 0.5.
std::vector<std::vector<bool>> decisions(const std::vector<float>& probs, std::size_t labels, bool one_class) {
  std::vector<std::vector<bool>> out;
  for (std::size_t r = 0; labels && r < probs.size() / labels; ++r) {
    const float* p = probs.data() + r * labels;
    std::vector<bool> d(labels, false);
    if (one_class)
      d[static_cast<std::size_t>(std::max_element(p, p + labels) - p)] = true;
    else
      for (std::size_t k = 0; k < labels; ++k) d[k] = p[k] >= 0.5f;
    out.push_back(std::move(d));
  }
  return out;
}

/// What `p` makes of "stupid" (the table's example column).
std::string example_of(text::Perturbation p) {
  text::PerturbOptions every;
  every.rate = 1;
  std::string e = text::perturb("stupid", p, every, 1).text;
  for (const auto& [bytes, name] :
       {std::pair<const char*, const char*>{"\xE2\x80\x8B", "<200B>"}, {"\xE2\x80\x8C", "<200C>"}, {"\xE2\x80\x8D", "<200D>"}})
    for (std::size_t at = e.find(bytes); at != std::string::npos; at = e.find(bytes)) e.replace(at, 3, name);  // shown, not hidden
  return e;
}

/// The runs of 4 or more ASCII letters of `word`, lower case: what a perturbation can target in it.
std::vector<std::string> letter_runs(const std::string& word) {
  std::vector<std::string> runs;
  std::string run;
  for (std::size_t i = 0; i <= word.size(); ++i) {
    const char c = i < word.size() ? word[i] : ' ';
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      run += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (run.size() >= 4) runs.push_back(run);
    run.clear();
  }
  return runs;
}

/// Per row, the words people marked in it (letter runs), from a rationale file whose texts are rows'
/// texts; a file none of whose texts is a row's is an error naming it.
std::map<std::int64_t, std::unordered_set<std::string>> marked_words(const std::map<std::int64_t, std::string>& texts,
                                                                     const RobustnessRequest& r) {
  std::unordered_map<std::string, std::unordered_set<std::string>> by_text;
  for (const data::RationaleRow& m : data::read_rationales(r.rationales, r.rationale_docs, "--rationale-docs"))
    for (const auto& [first, last] : m.spans)
      for (std::int64_t w = first; w < last; ++w)
        for (std::string& run : letter_runs(m.words[static_cast<std::size_t>(w)])) by_text[m.text].insert(std::move(run));
  std::map<std::int64_t, std::unordered_set<std::string>> marked;
  for (const auto& [row, t] : texts)
    if (const auto it = by_text.find(t); it != by_text.end() && !it->second.empty()) marked[row] = it->second;
  if (marked.empty())
    throw std::runtime_error(r.rationales + ": none of its texts is a text of " + r.csv + " (rows are matched by their text)");
  return marked;
}

std::unordered_set<std::string> read_words(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the word list");
  std::unordered_set<std::string> words;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!line.empty()) words.insert(line);
  }
  if (words.empty()) throw std::runtime_error(path + ": no words (one per line)");
  return words;
}

std::string format_table(const nlohmann::ordered_json& report) {
  std::string out = "robustness of " + report["model"].get<std::string>() + " on " + report["csv"].get<std::string>() + " (" +
                    std::to_string(report["rows"].get<std::int64_t>()) + " rows; " + report["targets"].get<std::string>() + ")\n";
  char buf[256];
  const bool rates = report.contains("rates");
  std::snprintf(buf, sizeof buf, "  %-12s %-14s%s %16s", "perturbation", "example", rates ? "  rate" : "", "words changed");
  out += buf;
  const auto& clean = report["clean"];
  for (const char* m : kHeadline)
    if (clean.contains(m)) out += std::string("  ") + std::string(10 - std::min<std::size_t>(10, std::string(m).size()), ' ') + m;
  out += "   flipped\n";
  std::snprintf(buf, sizeof buf, "  %-12s %-14s%s %16s", "clean", "", rates ? "      " : "", "");
  out += buf;
  for (const char* m : kHeadline)
    if (clean.contains(m)) {
      std::snprintf(buf, sizeof buf, "  %10.4f", clean[m].is_number() ? clean[m].get<double>() : std::nan(""));
      out += buf;
    }
  out += "\n";
  for (const auto& p : report["perturbations"]) {
    const std::string changed = std::to_string(p["words_changed"].get<std::int64_t>()) + " (" +
                                std::to_string(static_cast<int>(100 * p["share_changed"].get<double>() + 0.5)) + "%)";
    std::string example = p["example"].get<std::string>();
    std::size_t width = 0;  // in code points, as a terminal shows them
    for (char c : example) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    example += std::string(width < 14 ? 14 - width : 0, ' ');
    const std::string rate = rates ? "  " + std::to_string(static_cast<int>(100 * p["rate"].get<double>() + 0.5)) + "%" : "";
    std::snprintf(buf, sizeof buf, "  %-12s %s%-6s %16s", p["name"].get<std::string>().c_str(), example.c_str(), rate.c_str(),
                  changed.c_str());
    out += buf;
    for (const char* m : kHeadline)
      if (clean.contains(m)) {
        std::snprintf(buf, sizeof buf, "  %+10.4f", p["drop"][m].is_number() ? -p["drop"][m].get<double>() : std::nan(""));
        out += buf;
      }
    std::snprintf(buf, sizeof buf, "  %7.1f%%\n", 100 * p["flipped"].get<double>());
    out += buf;
  }
  out += "  (each perturbation's row: the change of each metric from clean, and the share of rows whose decision changed)\n";
  return out;
}

const char* targets_name(Targets t) { return t == Targets::kSalient ? "salient" : t == Targets::kMarked ? "marked" : "global"; }

/// The report's opening: what was scored and how it was perturbed.
nlohmann::ordered_json report_header(const RobustnessRequest& r, std::int64_t rows) {
  std::string rates;
  for (const double rate : r.rates) rates += (rates.empty() ? "" : ", ") + std::to_string(static_cast<int>(100 * rate + 0.5)) + "%";
  const std::string which = r.targets == Targets::kSalient ? std::string("of each row's words, those ") +
                                                                 models::method_name(r.salient_method) + " ranks highest for its decision"
                            : r.targets == Targets::kMarked ? "of the words people marked in each row (" + r.rationales + ")"
                            : r.words.empty()               ? std::string("of every word of 4 or more letters")
                                                            : "of the words of " + r.words;
  nlohmann::ordered_json header = {{"model", r.model}, {"csv", r.csv}, {"rows", rows}};
  if (r.rates.size() == 1)
    header["rate"] = r.rates.front();
  else
    header["rates"] = r.rates;
  header["seed"] = r.seed;
  if (r.targets != Targets::kGlobal) header["target"] = targets_name(r.targets);
  header["targets"] = rates + " " + which + ", seed " + std::to_string(r.seed);
  return header;
}

/// The headline metrics of `e` (those `clean` has) and each one's drop from `clean` (null where either is not a number).
std::pair<nlohmann::ordered_json, nlohmann::ordered_json> headline_and_drop(const Evaluation& clean, const Evaluation& e) {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object(), drop = nlohmann::ordered_json::object();
  for (const char* m : kHeadline) {
    if (!clean.metrics.contains(m)) continue;
    metrics[m] = e.metrics[m];
    drop[m] = clean.metrics[m].is_number() && e.metrics[m].is_number()
                  ? nlohmann::ordered_json(clean.metrics[m].get<double>() - e.metrics[m].get<double>())
                  : nlohmann::ordered_json();
  }
  return {metrics, drop};
}

}  // namespace

std::map<std::int64_t, std::vector<std::string>> salient_words(TrainedModel& model, const std::map<std::int64_t, std::string>& texts,
                                                               models::Method method, std::int64_t batch_size) {
  TextClassifierModel* classifier = model.text_classifier();
  if (!classifier) throw std::invalid_argument("--targets salient: the model is not a text classifier");
  std::vector<Input> inputs;
  for (const auto& [row, t] : texts) inputs.push_back({t, {}});
  ExplainOptions explain;
  if (method != models::Method::kAttention) explain.methods = {method};
  explain.shown_label_only = true;  // the decision's label: the most probable
  const std::vector<report::TextExplanation> explained = classifier->text_explanations(inputs, batch_size, explain);
  std::map<std::int64_t, std::vector<std::string>> ranked;
  auto row = texts.begin();
  for (const report::TextExplanation& e : explained) {
    const std::vector<float>* scores = nullptr;
    for (const report::Importance& i : e.importance)
      if (i.method == models::method_name(method) && !i.scores.empty()) scores = &i.scores.front();
    std::vector<std::pair<double, std::string>> words;  // (score, word), in text order
    for (const report::WordWeight& w : e.words) {
      double score = w.count == 0 ? -std::numeric_limits<double>::infinity() : scores ? 0.0 : w.weight;
      if (scores)
        for (std::size_t k = w.first; k < w.first + w.count && k < scores->size(); ++k) score += (*scores)[k];
      for (std::string& run : letter_runs(w.word)) words.emplace_back(score, std::move(run));
    }
    std::stable_sort(words.begin(), words.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string>& out = ranked[row->first];
    for (auto& [score, word] : words)
      if (std::find(out.begin(), out.end(), word) == out.end()) out.push_back(std::move(word));
    ++row;
  }
  return ranked;
}

namespace {

void check_robustness_request(const RobustnessRequest& r) {
  if (r.rates.empty()) throw std::invalid_argument("--rates: give one or more");
  for (const double rate : r.rates)
    if (!(rate >= 0 && rate <= 1)) throw std::invalid_argument("--rates: each must be in [0, 1]");
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  if (r.targets == Targets::kMarked && r.rationales.empty()) throw std::invalid_argument("--targets marked needs --rationales");
  if (r.targets != Targets::kMarked && !r.rationales.empty()) throw std::invalid_argument("--rationales applies with --targets marked");
  if (r.targets != Targets::kGlobal && !r.words.empty()) throw std::invalid_argument("--words applies with --targets global");
}

/// One perturbation at one rate: what it changed and how the model scored the file then.
struct Perturbed {
  Evaluation evaluation;
  std::int64_t targets = 0, changed = 0;
};

/// A robustness run's file, scored clean or rewritten, and each row's target words.
class RobustnessAttack {
 public:
  RobustnessAttack(TrainedModel& model, const RobustnessRequest& r) : model_(model), r_(r) {
    if (!r.words.empty()) lexicon_ = read_words(r.words);
  }

  /// The file's rows and their evaluation, each text rewritten by `rewrite` (none: as it is).
  std::pair<std::int64_t, Evaluation> scored(const TrainedModel::TextRewrite& rewrite) const {
    const EvaluateOptions full{r_.batch_size, EvaluateOptions::Detail::kFull, nullptr};
    const std::unique_ptr<Dataset> data =
        rewrite ? model_.open_rewritten_csv(r_.csv, r_.options, r_.threads, rewrite) : model_.open_csv(r_.csv, r_.options, r_.threads);
    return {data->rows(), data->evaluate(model_.module(), all_rows(data->rows()), full)};
  }

  /// The file scored as it is; with per-row targets, each row's text (as the model reads it, by
  /// its 1-based data row) kept on the way for find_targets, so the file is read once for both.
  std::pair<std::int64_t, Evaluation> scored_clean() {
    if (r_.targets == Targets::kGlobal) return scored(nullptr);
    return scored([this](const std::string& t, std::int64_t row) { return texts_[row] = t; });
  }

  /// Finds the words each row offers (after scored_clean): the model's salient ones, or the marked
  /// ones (not for kGlobal).
  void find_targets() {
    if (r_.targets == Targets::kGlobal) return;
    if (r_.targets == Targets::kSalient)
      salient_ = salient_words(model_, texts_, r_.salient_method, r_.batch_size);
    else
      marked_ = marked_words(texts_, r_);
    texts_.clear();
  }

  /// Perturbation p made at `rate` to each row's target words.
  Perturbed perturbed(text::Perturbation p, double rate) const {
    Perturbed out;
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> words;  // row -> (targets, changed), once per row
    out.evaluation = scored([&](const std::string& t, std::int64_t row) {
                       const std::optional<text::PerturbOptions> po = options_of(row, rate);
                       if (!po) return t;  // nothing of this row is a target
                       text::PerturbedText edited = text::perturb(t, p, *po, static_cast<std::uint64_t>(row));
                       words[row] = {edited.targets, edited.changed};
                       return std::move(edited.text);
                     }).second;
    for (const auto& [row, n] : words) out.targets += n.first, out.changed += n.second;
    return out;
  }

 private:
  /// How row `row` is rewritten at `rate`: every word or the lexicon's, each with probability rate;
  /// the marked words, each with probability rate; the top rate share of the salient words, all of
  /// them (an attacker's budget spent on what matters most). nullopt: the row has no target.
  std::optional<text::PerturbOptions> options_of(std::int64_t row, double rate) const {
    text::PerturbOptions po;
    po.rate = rate;
    po.seed = r_.seed;
    po.words = lexicon_;
    if (r_.targets == Targets::kMarked) {
      const auto it = marked_.find(row);
      if (it == marked_.end()) return std::nullopt;
      po.words = it->second;
    } else if (r_.targets == Targets::kSalient) {
      const auto it = salient_.find(row);
      const std::size_t n = it == salient_.end() ? 0 : it->second.size();
      const auto top = static_cast<std::size_t>(std::ceil(rate * static_cast<double>(n) - 1e-9));
      if (top == 0) return std::nullopt;
      po.words = std::unordered_set<std::string>(it->second.begin(), it->second.begin() + static_cast<std::ptrdiff_t>(top));
      po.rate = 1;
    }
    return po;
  }

  TrainedModel& model_;
  const RobustnessRequest& r_;
  std::unordered_set<std::string> lexicon_;
  std::map<std::int64_t, std::string> texts_;  ///< the rows' texts, until find_targets
  std::map<std::int64_t, std::vector<std::string>> salient_;
  std::map<std::int64_t, std::unordered_set<std::string>> marked_;
};

/// A perturbation's entry of the report.
nlohmann::ordered_json robustness_entry(text::Perturbation p, double rate, bool rates, const Perturbed& e, const Evaluation& clean,
                                        const std::vector<std::vector<bool>>& clean_decisions, const ModelFacts& facts, std::int64_t rows) {
  const auto d = decisions(e.evaluation.probabilities, facts.labels.size(), facts.one_class_per_row);
  std::int64_t flipped = 0;
  for (std::size_t i = 0; i < d.size() && i < clean_decisions.size(); ++i) flipped += d[i] != clean_decisions[i];
  const auto [metrics, drop] = headline_and_drop(clean, e.evaluation);
  nlohmann::ordered_json entry = {{"name", text::perturbation_name(p)}, {"example", example_of(p)}};
  if (rates) entry["rate"] = rate;
  entry["target_words"] = e.targets;
  entry["words_changed"] = e.changed;
  entry["share_changed"] = e.targets ? static_cast<double>(e.changed) / static_cast<double>(e.targets) : 0.0;
  entry["metrics"] = metrics;
  entry["drop"] = drop;
  entry["flipped"] = rows ? static_cast<double>(flipped) / static_cast<double>(rows) : 0.0;
  return entry;
}

}  // namespace

std::string robustness(const RobustnessRequest& r) {
  check_robustness_request(r);
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kRobustness, r.options);
  model->configure(r.options);
  RobustnessAttack attack(*model, r);
  std::vector<text::Perturbation> list = r.perturbations;
  if (list.empty())
    for (const auto& info : text::perturbations()) list.push_back(info.perturbation);
  const auto [rows, clean] = attack.scored_clean();
  if (clean.metrics.empty()) throw std::invalid_argument(r.csv + ": robustness needs labelled rows (the model's label columns)");
  attack.find_targets();
  const ModelFacts facts = model->facts();
  const auto clean_decisions = decisions(clean.probabilities, facts.labels.size(), facts.one_class_per_row);
  nlohmann::ordered_json report = report_header(r, rows);
  report["clean"] = headline_and_drop(clean, clean).first;
  report["perturbations"] = nlohmann::ordered_json::array();
  for (const text::Perturbation p : list)
    for (const double rate : r.rates)
      report["perturbations"].push_back(
          robustness_entry(p, rate, r.rates.size() > 1, attack.perturbed(p, rate), clean, clean_decisions, facts, rows));
  if (!r.json.empty()) io::write_file_atomic(r.json, report.dump(2) + "\n");
  return format_table(report);
}

}  // namespace attn::analyses
