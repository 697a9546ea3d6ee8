// `attn robustness` (see robustness.h).
#include "attn/analyses/robustness.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>

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
  return text::perturb("stupid", p, every, 1).text;
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
  std::snprintf(buf, sizeof buf, "  %-12s %-10s %16s", "perturbation", "example", "words changed");
  out += buf;
  const auto& clean = report["clean"];
  for (const char* m : kHeadline)
    if (clean.contains(m)) out += std::string("  ") + std::string(10 - std::min<std::size_t>(10, std::string(m).size()), ' ') + m;
  out += "   flipped\n";
  std::snprintf(buf, sizeof buf, "  %-12s %-10s %16s", "clean", "", "");
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
    example += std::string(width < 10 ? 10 - width : 0, ' ');
    std::snprintf(buf, sizeof buf, "  %-12s %s %16s", p["name"].get<std::string>().c_str(), example.c_str(), changed.c_str());
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

/// The report's opening: what was scored and how it was perturbed.
nlohmann::ordered_json report_header(const RobustnessRequest& r, std::int64_t rows) {
  return {{"model", r.model},
          {"csv", r.csv},
          {"rows", rows},
          {"rate", r.rate},
          {"seed", r.seed},
          {"targets", std::to_string(static_cast<int>(100 * r.rate + 0.5)) + "% of " +
                          (r.words.empty() ? std::string("every word of 4 or more letters") : "the words of " + r.words) + ", seed " +
                          std::to_string(r.seed)}};
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

std::string robustness(const RobustnessRequest& r) {
  if (!(r.rate >= 0 && r.rate <= 1)) throw std::invalid_argument("--rate must be in [0, 1]");
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kRobustness, r.options);
  model->configure(r.options);
  text::PerturbOptions po;
  po.rate = r.rate;
  po.seed = r.seed;
  if (!r.words.empty()) po.words = read_words(r.words);
  std::vector<text::Perturbation> list = r.perturbations;
  if (list.empty())
    for (const auto& info : text::perturbations()) list.push_back(info.perturbation);
  const EvaluateOptions full{r.batch_size, EvaluateOptions::Detail::kFull, nullptr};

  const auto scored = [&](const TrainedModel::TextRewrite& rewrite) {
    const std::unique_ptr<Dataset> data =
        rewrite ? model->open_rewritten_csv(r.csv, r.options, r.threads, rewrite) : model->open_csv(r.csv, r.options, r.threads);
    return std::make_pair(data->rows(), data->evaluate(model->module(), all_rows(data->rows()), full));
  };
  const auto [rows, clean] = scored(nullptr);
  if (clean.metrics.empty()) throw std::invalid_argument(r.csv + ": robustness needs labelled rows (the model's label columns)");
  const ModelFacts facts = model->facts();
  const std::size_t labels = facts.labels.size();
  const bool one_class = facts.one_class_per_row;
  const auto clean_decisions = decisions(clean.probabilities, labels, one_class);

  nlohmann::ordered_json report = report_header(r, rows);
  report["clean"] = headline_and_drop(clean, clean).first;
  report["perturbations"] = nlohmann::ordered_json::array();
  for (const text::Perturbation p : list) {
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> words;  // row -> (targets, changed), once per row
    const auto rewrite = [&](const std::string& t, std::int64_t row) {
      text::PerturbedText out = text::perturb(t, p, po, static_cast<std::uint64_t>(row));
      words[row] = {out.targets, out.changed};
      return std::move(out.text);
    };
    const Evaluation e = scored(rewrite).second;
    std::int64_t targets = 0, changed = 0;
    for (const auto& [row, n] : words) targets += n.first, changed += n.second;
    const auto d = decisions(e.probabilities, labels, one_class);
    std::int64_t flipped = 0;
    for (std::size_t i = 0; i < d.size() && i < clean_decisions.size(); ++i) flipped += d[i] != clean_decisions[i];
    const auto [metrics, drop] = headline_and_drop(clean, e);
    report["perturbations"].push_back({{"name", text::perturbation_name(p)},
                                       {"example", example_of(p)},
                                       {"target_words", targets},
                                       {"words_changed", changed},
                                       {"share_changed", targets ? static_cast<double>(changed) / static_cast<double>(targets) : 0.0},
                                       {"metrics", metrics},
                                       {"drop", drop},
                                       {"flipped", rows ? static_cast<double>(flipped) / static_cast<double>(rows) : 0.0}});
  }
  if (!r.json.empty()) io::write_file_atomic(r.json, report.dump(2) + "\n");
  return format_table(report);
}

}  // namespace attn::analyses
