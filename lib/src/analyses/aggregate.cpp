// Word importance over a corpus (see aggregate.h).
#include "attn/analyses/aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/analyses/faithfulness.h"
#include "attn/io/atomic_file.h"
#include "attn/parallel/sharing.h"
#include "attn/report/explanation.h"
#include "attn/report/plots.h"
#include "attn/tasks/task.h"
#include "attn/text/csv.h"

namespace attn::analyses {

using namespace tasks;  // the task interface (tasks/task.h) the analyses drive

void WordTotals::add(const std::string& word, double score, int half) {
  Sums& s = words_[word];
  s.sum[half] += score;
  ++s.count[half];
}

std::vector<WordFigure> WordTotals::ranked(std::int64_t min_count, std::size_t top, int half) const {
  std::vector<WordFigure> out;
  for (const auto& [word, s] : words_) {
    const std::int64_t n = half < 0 ? s.count[0] + s.count[1] : s.count[half];
    const double sum = half < 0 ? s.sum[0] + s.sum[1] : s.sum[half];
    if (n >= std::max<std::int64_t>(min_count, 1)) out.push_back({word, n, sum / static_cast<double>(n)});
  }
  // (the map's byte order breaks ties: a stable sort keeps it)
  std::stable_sort(out.begin(), out.end(), [](const WordFigure& a, const WordFigure& b) { return a.mean > b.mean; });
  if (top > 0 && out.size() > top) out.resize(top);
  return out;
}

std::optional<double> WordTotals::stability(std::int64_t min_count, std::size_t top) const {
  std::map<std::string, std::pair<float, float>> both;  // the union's words, with each half's mean
  const float lowest = std::numeric_limits<float>::lowest();
  for (int half = 0; half < 2; ++half)
    for (const WordFigure& w : ranked(min_count, top, half)) both.emplace(w.word, std::make_pair(lowest, lowest));
  if (both.size() < 2) return std::nullopt;
  for (int half = 0; half < 2; ++half)
    for (const WordFigure& w : ranked(min_count, 0, half))
      if (auto it = both.find(w.word); it != both.end()) (half == 0 ? it->second.first : it->second.second) = static_cast<float>(w.mean);
  std::vector<float> a, b;
  for (const auto& [word, means] : both) a.push_back(means.first), b.push_back(means.second);
  return kendall_tau_b(a, b);
}

void WordTotals::merge(const WordTotals& other) {
  for (const auto& [word, o] : other.words_) {
    Sums& s = words_[word];
    for (int h = 0; h < 2; ++h) s.sum[h] += o.sum[h], s.count[h] += o.count[h];
  }
}

nlohmann::json WordTotals::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [word, s] : words_) j[word] = {s.sum[0], s.sum[1], s.count[0], s.count[1]};
  return j;
}

WordTotals WordTotals::from_json(const nlohmann::json& j) {
  WordTotals t;
  for (const auto& [word, v] : j.items()) {
    Sums& s = t.words_[word];
    s.sum[0] = v.at(0).get<double>(), s.sum[1] = v.at(1).get<double>();
    s.count[0] = v.at(2).get<std::int64_t>(), s.count[1] = v.at(3).get<std::int64_t>();
  }
  return t;
}

namespace {

/// One method and label: the rows decided for the label, and its words' totals.
struct Group {
  std::int64_t rows = 0;
  WordTotals words;
};
/// Every method and label's group [method][label].
using Groups = std::vector<std::vector<Group>>;

/// Each chunk's groups, by chunk number, as JSON: {"chunk": [[{"rows", "words"}, ...], ...], ...}.
std::string chunks_json(const std::map<std::size_t, Groups>& chunks) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [chunk, groups] : chunks) {
    nlohmann::json methods = nlohmann::json::array();
    for (const auto& labels : groups) {
      nlohmann::json per_label = nlohmann::json::array();
      for (const Group& g : labels) per_label.push_back({{"rows", g.rows}, {"words", g.words.to_json()}});
      methods.push_back(per_label);
    }
    j[std::to_string(chunk)] = methods;
  }
  return j.dump();
}

void read_chunks(const std::string& text, std::map<std::size_t, Groups>& chunks) {
  const nlohmann::json parsed = nlohmann::json::parse(text);  // (kept alive: the loop reads into it)
  for (const auto& [chunk, methods] : parsed.items()) {
    Groups& groups = chunks[static_cast<std::size_t>(std::stoull(chunk))];
    for (const auto& labels : methods) {
      groups.emplace_back();
      for (const auto& g : labels) groups.back().push_back({g.at("rows").get<std::int64_t>(), WordTotals::from_json(g.at("words"))});
    }
  }
}

/// Adds one explained text to the groups [method][label]: its i-th method's scores go to the group
/// of method slots[i]; each kept token of each word scores its label's score at its place. A word
/// whose tokens were not all kept (some beyond num_words) counts once, as its tokens joined by a
/// space, with the sum of its kept tokens' scores.
void add_text(const report::TextExplanation& e, const std::vector<std::size_t>& slots, const std::vector<std::size_t>& decided, int half,
              Groups& groups) {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const auto& scores = e.importance.at(i).scores;
    for (std::size_t label : decided) {
      const std::vector<float>& s = scores.at(scores.size() == 1 ? 0 : label);
      Group& g = groups[slots[i]][label];
      ++g.rows;
      for (const report::WordWeight& w : e.words) {
        if (w.count == 0) continue;
        if (w.tokens.size() == w.count) {
          for (std::size_t t = 0; t < w.count; ++t) g.words.add(w.tokens[t], s.at(w.first + t), half);
          continue;
        }
        std::string joined;
        double sum = 0;
        for (const std::string& t : w.tokens) joined += (joined.empty() ? "" : " ") + t;
        for (std::size_t t = 0; t < w.count; ++t) sum += s.at(w.first + t);
        g.words.add(joined, sum, half);
      }
    }
  }
}

/// A CSV field: as it is unless it needs quoting.
std::string field(const std::string& s) { return s.find_first_of(",\"\r\n") == std::string::npos ? s : text::csv_quote(s); }

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

/// One method and label's words as an HTML table with a bar per mean (scaled to the largest |mean|).
std::string html_table(const std::string& title, const std::vector<WordFigure>& words, const std::optional<double>& tau) {
  double scale = 0;
  for (const WordFigure& w : words) scale = std::max(scale, std::abs(w.mean));
  std::string h = "<section><h2>" + report::xml_escape(title) +
                  "</h2><p>stability (Kendall's tau between the file's halves): " + (tau ? number(*tau) : std::string("undefined")) +
                  "</p><table><tr><th>word</th><th>count</th><th>mean</th><th></th></tr>";
  for (const WordFigure& w : words) {
    const double width = scale > 0 ? 200.0 * std::abs(w.mean) / scale : 0;
    h += "<tr><td>" + report::xml_escape(w.word) + "</td><td>" + std::to_string(w.count) + "</td><td>" + number(w.mean) +
         "</td><td><div style=\"height:10px;width:" + number(width) + "px;background:" + (w.mean < 0 ? "#4575b4" : "#d73027") +
         "\"></div></td></tr>";
  }
  return h + "</table></section>\n";
}

/// The methods to aggregate: those asked for, else the attention and, when the model gives it, grad-input.
std::vector<models::Method> methods_of(const AggregateRequest& r, const TrainedModel& model) {
  const std::vector<models::Method> available = model.methods();
  std::vector<models::Method> methods = r.methods;
  if (methods.empty()) {
    methods = {models::Method::kAttention};
    if (std::find(available.begin(), available.end(), models::Method::kGradInput) != available.end())
      methods.push_back(models::Method::kGradInput);
  }
  return models::check_available(methods, available, "--methods");
}

/// Two passes: the methods that come with the prediction (the attention) for every row, which also
/// gives the decisions; the per-label methods only for the rows decided for some label, as no
/// other row counts (most rows of a corpus, when the labels are rare).
struct Passes {
  ExplainOptions every_row, decided_rows;
  std::vector<std::size_t> every_row_slots, decided_row_slots;  // their methods' places in the methods
};

Passes passes_of(const std::vector<models::Method>& methods, int steps) {
  Passes p;
  p.every_row.steps = p.decided_rows.steps = steps;
  for (std::size_t m = 0; m < methods.size(); ++m) {
    (models::with_prediction(methods[m]) ? p.every_row : p.decided_rows).methods.push_back(methods[m]);
    (models::with_prediction(methods[m]) ? p.every_row_slots : p.decided_row_slots).push_back(m);
  }
  return p;
}

/// One chunk's sums: `rows` (the file's rows from `first`, of `n`) explained in both passes, each
/// row's scores added to the groups of the labels the model decides for it, by the half of the file
/// it is in.
Groups explain_chunk(TextClassifierModel& model, const std::vector<Input>& rows, std::size_t first, std::size_t n, const Passes& passes,
                     std::size_t methods, std::size_t labels, bool one_class, std::int64_t batch_size) {
  Groups groups(methods, std::vector<Group>(labels));
  const std::vector<report::TextExplanation> seen = model.text_explanations(rows, batch_size, passes.every_row);
  const auto half = [&](std::size_t i) { return first + i < n / 2 ? 0 : 1; };
  std::vector<std::vector<std::size_t>> decided(rows.size());  // per row, the labels the model decides for it
  std::vector<Input> again;                                    // the rows with one
  std::vector<std::size_t> again_at;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const report::TextExplanation& e = seen.at(i);
    if (one_class)
      decided[i].push_back(
          static_cast<std::size_t>(std::max_element(e.probabilities.begin(), e.probabilities.end()) - e.probabilities.begin()));
    else
      for (std::size_t l = 0; l < e.probabilities.size(); ++l)
        if (e.probabilities[l] >= 0.5f) decided[i].push_back(l);
    add_text(e, passes.every_row_slots, decided[i], half(i), groups);
    if (!decided[i].empty()) {
      again.push_back(rows[i]);
      again_at.push_back(i);
    }
  }
  if (passes.decided_rows.methods.empty() || again.empty()) return groups;
  const std::vector<report::TextExplanation> scored = model.text_explanations(again, batch_size, passes.decided_rows);
  for (std::size_t j = 0; j < again.size(); ++j)
    add_text(scored.at(j), passes.decided_row_slots, decided[again_at[j]], half(again_at[j]), groups);
  return groups;
}

/// The chunks' sums added in chunk order: the same bits however the chunks were shared.
Groups total_of(const std::map<std::size_t, Groups>& chunks, std::size_t methods, std::size_t labels) {
  Groups groups(methods, std::vector<Group>(labels));
  for (const auto& [c, part] : chunks)
    for (std::size_t m = 0; m < methods; ++m)
      for (std::size_t l = 0; l < labels; ++l) {
        groups[m][l].rows += part.at(m).at(l).rows;
        groups[m][l].words.merge(part.at(m).at(l).words);
      }
  return groups;
}

/// The outputs of the sums over `n` rows of `csv_path`: writes the JSON, CSV and HTML asked for,
/// returns the table.
std::string report_groups(const AggregateRequest& r, const std::string& csv_path, std::size_t n, const Groups& groups,
                          const std::vector<models::Method>& methods, const ModelFacts& facts) {
  const std::vector<std::string>& labels = facts.labels;
  const auto top = static_cast<std::size_t>(r.top);
  nlohmann::ordered_json json = {{"model", r.model},
                                 {"csv", csv_path},
                                 {"rows", n},
                                 {"top", r.top},
                                 {"min_count", r.min_count},
                                 {"decided", facts.one_class_per_row ? "most probable class" : "p >= 0.5"},
                                 {"methods", nlohmann::ordered_json::object()}};
  std::string table = "word importance over " + std::to_string(n) + " rows of " + csv_path + " (words seen " + std::to_string(r.min_count) +
                      "+ times in a label's rows; stability: Kendall's tau between the file's halves)\n";
  std::string csv = "method,label,rank,word,count,mean\n";
  std::string html;
  for (std::size_t m = 0; m < methods.size(); ++m) {
    const std::string method = models::method_name(methods[m]);
    nlohmann::ordered_json per_label = nlohmann::ordered_json::object();
    for (std::size_t l = 0; l < labels.size(); ++l) {
      const Group& g = groups[m][l];
      const std::vector<WordFigure> words = g.words.ranked(r.min_count, top);
      const std::optional<double> tau = g.words.stability(r.min_count, top);
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      table += "\n" + method + ", " + labels[l] + " (" + std::to_string(g.rows) + " rows; stability " + (tau ? number(*tau) : "undefined") +
               "):";
      for (std::size_t k = 0; k < words.size(); ++k) {
        const WordFigure& w = words[k];
        list.push_back({{"word", w.word}, {"count", w.count}, {"mean", w.mean}});
        csv += field(method) + "," + field(labels[l]) + "," + std::to_string(k + 1) + "," + field(w.word) + "," + std::to_string(w.count) +
               "," + number(w.mean) + "\n";
        if (k < 10) table += " " + w.word + " (" + std::to_string(w.count) + ", " + number(w.mean) + ")";
      }
      if (words.empty()) table += " no word seen " + std::to_string(r.min_count) + "+ times";
      table += "\n";
      per_label[labels[l]] = {
          {"rows", g.rows}, {"stability_tau", tau ? nlohmann::ordered_json(*tau) : nlohmann::ordered_json()}, {"words", list}};
      html += html_table(method + ": " + labels[l] + " (" + std::to_string(g.rows) + " rows)", words, tau);
    }
    json["methods"][method] = per_label;
  }
  io::StagedFiles files;
  if (!r.json.empty()) files.add(r.json, json.dump(2) + "\n");
  if (!r.csv.empty()) files.add(r.csv, csv);
  if (!r.html.empty()) files.add(r.html, report::html_page("Word importance over " + csv_path, html));
  files.commit();
  return table;
}

}  // namespace

std::string aggregate(const AggregateRequest& r) {
  if (r.top < 1) throw std::invalid_argument("--top must be >= 1");
  if (r.min_count < 1) throw std::invalid_argument("--min-count must be >= 1");
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  if (r.chunk < 1) throw std::invalid_argument("the chunk of rows must be >= 1");
  check_steps(r.steps, "--steps");
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kAggregate, r.options);
  TextClassifierModel* classifier = model->text_classifier();
  if (!classifier)
    throw std::invalid_argument("aggregate ranks the words of a text classifier's texts; " + describe_model(model->saved()) + " is none");
  if (!r.options.given("csv")) throw std::invalid_argument("--csv is required");
  const std::string csv = r.options.text("csv");
  const std::vector<models::Method> methods = methods_of(r, *model);
  const ModelFacts facts = model->facts();
  const std::vector<Input> inputs = model->read_inputs({}, r.options, nullptr);
  if (inputs.empty()) throw std::invalid_argument(csv + ": no rows");
  const Passes passes = passes_of(methods, r.steps);
  // Each chunk's sums apart (shared by workers, each worker explains the chunks it takes).
  const std::size_t n = inputs.size(), chunk = static_cast<std::size_t>(r.chunk), chunks_in_file = (n + chunk - 1) / chunk;
  const bool shared = r.sharing && r.sharing->size() > 1;
  std::map<std::size_t, Groups> chunks;
  if (shared) r.sharing->new_jobs();
  for (std::size_t c = shared ? static_cast<std::size_t>(r.sharing->next_job()) : 0; c < chunks_in_file;
       c = shared ? static_cast<std::size_t>(r.sharing->next_job()) : c + 1) {
    const std::size_t first = c * chunk, last = std::min(n, first + chunk);
    const std::vector<Input> rows(inputs.begin() + static_cast<std::ptrdiff_t>(first), inputs.begin() + static_cast<std::ptrdiff_t>(last));
    chunks[c] =
        explain_chunk(*classifier, rows, first, n, passes, methods.size(), facts.labels.size(), facts.one_class_per_row, r.batch_size);
  }
  if (shared) {  // every worker's chunks to every worker; rank 0 reports
    const std::vector<std::string> all = r.sharing->gather_bytes(chunks_json(chunks));
    if (r.sharing->rank() != 0) return "";
    chunks.clear();
    for (const std::string& part : all) read_chunks(part, chunks);
    if (chunks.size() != chunks_in_file)
      throw std::runtime_error("aggregate: the workers explained " + std::to_string(chunks.size()) + " chunks of " +
                               std::to_string(chunks_in_file));
  }
  return report_groups(r, csv, n, total_of(chunks, methods.size(), facts.labels.size()), methods, facts);
}

std::string aggregate(const AggregateRequest& request, std::chrono::seconds worker_timeout) {
  return parallel::run_shared(
      request, [](const AggregateRequest& shared) { return aggregate(shared); }, worker_timeout);
}

}  // namespace attn::analyses
