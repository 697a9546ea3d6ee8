// `attn audit`: a counterfactual audit of identity bias (see audit.h).
#include "attn/analyses/audit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/io/atomic_file.h"
#include "attn/metrics/bias.h"
#include "attn/report/plots.h"
#include "attn/tasks/task.h"
#include "attn/text/identity_terms.h"

namespace attn::analyses {

using namespace tasks;  // the task interface (tasks/task.h) the analyses drive
namespace {

/// Texts scored at once: what is held in memory besides the file.
constexpr std::size_t kChunk = 8192;
/// Texts explained at once by integrated gradients (each times its steps).
constexpr std::int64_t kExplainBatch = 64;

/// What "toxic" means for the model: a label's probability, or a benign class's complement.
struct Toxicity {
  std::vector<std::string> labels;
  std::size_t label = 0;  ///< the label (or, when benign, the benign class)
  bool benign = false, one_class = false;

  std::string name() const { return benign ? "1 - p(" + labels[label] + ")" : "p(" + labels[label] + ")"; }
  double of(const float* p) const { return benign ? 1.0 - p[label] : p[label]; }
  bool decided(const float* p) const {
    if (!one_class) return p[label] >= 0.5f;
    const auto best = static_cast<std::size_t>(std::max_element(p, p + labels.size()) - p);
    return benign ? best != label : best == label;
  }
};

Toxicity toxicity_of(const ModelFacts& facts, const AuditRequest& r) {
  Toxicity t;
  t.labels = facts.labels;
  t.one_class = facts.one_class_per_row;
  if (!r.label.empty() && !r.benign.empty())
    throw std::invalid_argument("--label and --benign: give one (the toxicity is one or the other)");
  const std::string& name = r.benign.empty() ? r.label : r.benign;
  const char* flag = r.benign.empty() ? "--label" : "--benign";
  if (!r.benign.empty() && !t.one_class)
    throw std::invalid_argument("--benign names a class of a model with one class per row; this model's labels are 0/1 (use --label)");
  t.benign = !r.benign.empty();
  if (!name.empty()) {
    const auto it = std::find(t.labels.begin(), t.labels.end(), name);
    if (it == t.labels.end()) {
      std::string all;
      for (const std::string& l : t.labels) all += (all.empty() ? "" : ", ") + l;
      throw std::invalid_argument(std::string(flag) + ": '" + name + "' is not one of this model's labels (" + all + ")");
    }
    t.label = static_cast<std::size_t>(it - t.labels.begin());
  }
  return t;
}

/// The probabilities of `texts` [texts x labels], row-major, a chunk at a time.
std::vector<float> probabilities(TextClassifierModel& model, const std::vector<std::string>& texts, const std::vector<std::string>& labels,
                                 std::int64_t batch_size) {
  std::vector<float> out;
  out.reserve(texts.size() * labels.size());
  for (std::size_t first = 0; first < texts.size(); first += kChunk) {
    const std::vector<std::string> chunk(texts.begin() + static_cast<std::ptrdiff_t>(first),
                                         texts.begin() + static_cast<std::ptrdiff_t>(std::min(texts.size(), first + kChunk)));
    const std::vector<float> p = model.text_probabilities(chunk, batch_size);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

nlohmann::ordered_json maybe(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(); }

std::string number(const std::optional<double>& v, const char* format = "%.3f") {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, format, *v);
  return b;
}

// --- templates ---------------------------------------------------------------------------------

struct TemplatePart {
  metrics::BiasFigures figures;
  std::vector<double> kind_mean, kind_flagged, toxic_mean;  ///< per term
  std::size_t per_term = 0;
  /// Per filler word, in the templates' order: the mean toxicity of its sentences over the terms.
  struct Filler {
    std::string word;
    bool toxic = false;
    double mean = 0;
  };
  std::vector<Filler> fillers;
  std::vector<text::TemplateSentence> kind;  ///< every term's kind sentences, term after term
};

TemplatePart templates(TextClassifierModel& model, const std::vector<std::string>& terms, const Toxicity& tox, std::int64_t batch_size) {
  TemplatePart out;
  std::vector<std::string> texts;
  std::vector<std::uint8_t> positive;
  std::vector<std::size_t> term_of, filler_of;
  std::map<std::string, std::size_t> filler_index;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::vector<text::TemplateSentence> sentences = text::template_sentences(terms[i]);
    out.per_term = sentences.size();
    for (const text::TemplateSentence& s : sentences) {
      texts.push_back(s.text);
      positive.push_back(s.toxic);
      term_of.push_back(i);
      if (!s.toxic) out.kind.push_back(s);
      const auto [at, added] = filler_index.emplace(s.filler, out.fillers.size());
      if (added) out.fillers.push_back({s.filler, s.toxic, 0});
      filler_of.push_back(at->second);
    }
  }
  const std::vector<float> probs = probabilities(model, texts, tox.labels, batch_size);
  const std::size_t L = tox.labels.size();
  std::vector<float> scores(texts.size());
  std::vector<std::vector<float>> members(terms.size(), std::vector<float>(texts.size(), 0.0f));
  out.kind_mean.assign(terms.size(), 0);
  out.kind_flagged.assign(terms.size(), 0);
  out.toxic_mean.assign(terms.size(), 0);
  std::vector<double> kind_n(terms.size(), 0), toxic_n(terms.size(), 0), filler_n(out.fillers.size(), 0);
  for (std::size_t r = 0; r < texts.size(); ++r) {
    const float* p = probs.data() + r * L;
    const std::size_t i = term_of[r];
    scores[r] = static_cast<float>(tox.of(p));
    members[i][r] = 1;
    out.fillers[filler_of[r]].mean += scores[r], ++filler_n[filler_of[r]];
    if (positive[r]) {
      out.toxic_mean[i] += scores[r], ++toxic_n[i];
    } else {
      out.kind_mean[i] += scores[r], ++kind_n[i];
      out.kind_flagged[i] += tox.decided(p);
    }
  }
  for (std::size_t i = 0; i < terms.size(); ++i) {
    out.kind_mean[i] /= kind_n[i];
    out.kind_flagged[i] /= kind_n[i];
    out.toxic_mean[i] /= toxic_n[i];
  }
  for (std::size_t f = 0; f < out.fillers.size(); ++f) out.fillers[f].mean /= filler_n[f];
  try {
    out.figures = metrics::bias_figures(scores, positive, terms, members);
  } catch (const std::invalid_argument&) {
    // Every sentence scored the same: no AUC is defined. Report the terms with undefined AUCs.
    out.figures.overall_auc = std::nan("");
    for (const std::string& t : terms) out.figures.identities.push_back({t, static_cast<std::int64_t>(out.per_term), 0, {}, {}, {}});
  }
  return out;
}

// --- swaps -------------------------------------------------------------------------------------

struct TermSwaps {
  std::int64_t mentioned_in = 0;  ///< rows that mention the term
  std::int64_t swapped_in = 0;    ///< texts it was put into
  double shift_sum = 0;
  std::optional<double> largest_rise;
  std::int64_t rise_row = 0;
  std::string rise_from;
  std::int64_t flips_to_toxic = 0, flips_to_kind = 0;
};

struct Flip {
  std::int64_t row = 0;
  std::string from, to, text, swapped;
  double before = 0, after = 0;
};

struct SwapPart {
  std::string csv;
  std::int64_t rows = 0, rows_mentioning = 0, texts_scored = 0;
  std::vector<TermSwaps> terms;
  std::vector<Flip> flips;  ///< the first `examples`, by the size of the shift
  std::int64_t flips_total = 0;
};

SwapPart swaps(const TrainedModel& model, TextClassifierModel& classifier, const AuditRequest& r, const std::vector<std::string>& terms,
               const Toxicity& tox) {
  SwapPart out;
  out.csv = r.options.text("csv");
  const std::vector<Input> inputs = model.read_inputs({}, r.options, nullptr);
  out.rows = static_cast<std::int64_t>(inputs.size());
  out.terms.resize(terms.size());
  std::vector<std::string> originals;
  for (const Input& in : inputs) originals.push_back(in.text);
  const std::size_t L = tox.labels.size();
  const std::vector<float> before = probabilities(classifier, originals, tox.labels, r.batch_size);

  // The swapped texts, a chunk of rows at a time: (row, from, to) and the text.
  struct Job {
    std::size_t row, from, to;
  };
  std::vector<Job> jobs;
  std::vector<std::string> texts;
  const auto score_jobs = [&] {
    const std::vector<float> after = probabilities(classifier, texts, tox.labels, r.batch_size);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const Job& job = jobs[j];
      const float* p0 = before.data() + job.row * L;
      const float* p1 = after.data() + j * L;
      const double shift = tox.of(p1) - tox.of(p0);
      TermSwaps& t = out.terms[job.to];
      ++t.swapped_in;
      t.shift_sum += shift;
      if (!t.largest_rise || shift > *t.largest_rise) {
        t.largest_rise = shift;
        t.rise_row = static_cast<std::int64_t>(job.row) + 1;
        t.rise_from = terms[job.from];
      }
      const bool was = tox.decided(p0), is = tox.decided(p1);
      if (was == is) continue;
      ++(is ? t.flips_to_toxic : t.flips_to_kind);
      ++out.flips_total;
      out.flips.push_back(
          {static_cast<std::int64_t>(job.row) + 1, terms[job.from], terms[job.to], originals[job.row], texts[j], tox.of(p0), tox.of(p1)});
    }
    out.texts_scored += static_cast<std::int64_t>(jobs.size());
    // Keep the largest shifts only (what the report lists).
    std::stable_sort(out.flips.begin(), out.flips.end(),
                     [](const Flip& a, const Flip& b) { return std::abs(a.after - a.before) > std::abs(b.after - b.before); });
    if (out.flips.size() > static_cast<std::size_t>(r.examples)) out.flips.resize(static_cast<std::size_t>(r.examples));
    jobs.clear();
    texts.clear();
  };
  for (std::size_t row = 0; row < originals.size(); ++row) {
    bool mentions = false;
    for (std::size_t from = 0; from < terms.size(); ++from) {
      if (text::find_mentions(originals[row], terms[from]).empty()) continue;
      mentions = true;
      ++out.terms[from].mentioned_in;
      for (std::size_t to = 0; to < terms.size(); ++to) {
        if (to == from) continue;
        jobs.push_back({row, from, to});
        texts.push_back(text::swap_term(originals[row], terms[from], terms[to]));
      }
    }
    out.rows_mentioning += mentions;
    if (texts.size() >= kChunk) score_jobs();
  }
  if (!texts.empty()) score_jobs();
  return out;
}

// --- why ---------------------------------------------------------------------------------------

struct WhyPart {
  std::vector<std::optional<double>> mean;  ///< per term: its mean importance on its kind sentences
  std::vector<std::int64_t> sentences;      ///< per term: the sentences where it has a token
};

WhyPart why(TextClassifierModel& model, const std::vector<std::string>& terms, const std::vector<text::TemplateSentence>& kind,
            const Toxicity& tox, int steps) {
  WhyPart out;
  out.mean.assign(terms.size(), std::nullopt);
  out.sentences.assign(terms.size(), 0);
  std::vector<Input> inputs;
  for (const text::TemplateSentence& s : kind) inputs.push_back({s.text, {}});
  ExplainOptions options;
  options.methods = {models::Method::kIntegratedGradients};
  options.steps = steps;
  const std::vector<report::TextExplanation> explained = model.text_explanations(inputs, kExplainBatch, options);
  const std::size_t per_term = kind.size() / terms.size();
  std::vector<double> sum(terms.size(), 0);
  for (std::size_t k = 0; k < kind.size(); ++k) {
    const report::TextExplanation& e = explained[k];
    const auto& scores = e.importance.at(0).scores;
    const std::vector<float>& s = scores.at(scores.size() == 1 ? 0 : tox.label);
    double importance = 0;
    std::size_t tokens = 0;
    for (std::size_t w = kind[k].first_word; w < kind[k].first_word + kind[k].words && w < e.words.size(); ++w)
      for (std::size_t t = 0; t < e.words[w].count; ++t) importance += s.at(e.words[w].first + t), ++tokens;
    if (tokens == 0) continue;  // the term is not in the model's vocabulary
    const std::size_t i = k / per_term;
    sum[i] += tox.benign ? -importance : importance;
    ++out.sentences[i];
  }
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (out.sentences[i] > 0) out.mean[i] = sum[i] / static_cast<double>(out.sentences[i]);
  return out;
}

// --- the report --------------------------------------------------------------------------------

/// A cell's shading: white at `good`, red as the value moves to `bad`.
std::string shade(const std::optional<double>& v, double good, double bad) {
  return v ? report::heat_style((*v - good) / (bad - good)) : "";
}

std::string html_report(const nlohmann::ordered_json& report, const TemplatePart& t, const std::vector<std::size_t>& order) {
  const auto& terms = report["terms"];
  const std::string tox = report["toxicity"].get<std::string>();
  std::string h = "<p>Toxicity is " + report::xml_escape(tox) + ". Terms in order of their kind sentences' mean toxicity.</p>";
  h += "<table border=\"1\" cellspacing=\"0\" cellpadding=\"3\"><tr><th>term</th><th>kind sentences: mean toxicity</th><th>decided "
       "toxic</th>"
       "<th>subgroup AUC</th><th>BPSN AUC</th><th>BNSP AUC</th><th>swapped in: mean shift</th><th>largest rise</th><th>flips to toxic</th>"
       "<th>importance (IG)</th></tr>";
  for (std::size_t i : order) {
    const auto& term = terms[i];
    const auto get = [&](const char* part, const char* key) -> std::optional<double> {
      const auto& v = term[part][key];
      return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
    };
    h += "<tr><td>" + report::xml_escape(term["term"].get<std::string>()) + "</td>";
    h += "<td" + shade(get("templates", "kind_mean"), 0.1, 0.6) + ">" + number(get("templates", "kind_mean")) + "</td>";
    h += "<td" + shade(get("templates", "kind_decided_toxic"), 0, 0.5) + ">" + number(get("templates", "kind_decided_toxic")) + "</td>";
    for (const char* k : {"subgroup_auc", "bpsn_auc", "bnsp_auc"})
      h += "<td" + shade(get("templates", k), 1, 0.5) + ">" + number(get("templates", k)) + "</td>";
    if (term.contains("swaps")) {
      h += "<td" + shade(get("swaps", "mean_shift"), 0, 0.2) + ">" + number(get("swaps", "mean_shift"), "%+.3f") + "</td>";
      h += "<td>" + number(get("swaps", "largest_rise"), "%+.3f") + "</td><td>" +
           std::to_string(term["swaps"]["flips_to_toxic"].get<std::int64_t>()) + "</td>";
    } else {
      h += "<td>-</td><td>-</td><td>-</td>";
    }
    h += "<td>" + (term.contains("why") ? number(get("why", "mean_importance"), "%+.3f") : std::string("-")) + "</td></tr>";
  }
  h += "</table><p>Templates: overall AUC " +
       number(std::isnan(t.figures.overall_auc) ? std::nullopt : std::optional<double>(t.figures.overall_auc)) +
       ", power means (p = -5) subgroup " + number(t.figures.subgroup_mean) + ", BPSN " + number(t.figures.bpsn_mean) + ", BNSP " +
       number(t.figures.bnsp_mean) + ", final " + number(t.figures.final_metric) + ".</p>";
  if (report.contains("swaps") && !report["swaps"]["flipped"].empty()) {
    h += "<h2>Decisions that flip when one term replaces another</h2><table border=\"1\" cellspacing=\"0\" cellpadding=\"3\">"
         "<tr><th>row</th><th>swap</th><th>toxicity before</th><th>after</th><th>text after the swap</th></tr>";
    for (const auto& f : report["swaps"]["flipped"])
      h += "<tr><td>" + std::to_string(f["row"].get<std::int64_t>()) + "</td><td>" + report::xml_escape(f["from"].get<std::string>()) +
           " &rarr; " + report::xml_escape(f["to"].get<std::string>()) + "</td><td>" + number(f["before"].get<double>()) + "</td><td>" +
           number(f["after"].get<double>()) + "</td><td>" + report::xml_escape(f["swapped_text"].get<std::string>()) + "</td></tr>";
    h += "</table>";
  }
  return report::html_page("Identity-bias audit of " + report["model"].get<std::string>(), h);
}

/// Each filler word's mean toxicity over the terms' sentences, in the templates' order.
nlohmann::ordered_json fillers_json(const TemplatePart& t) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const TemplatePart::Filler& f : t.fillers) out.push_back({{"word", f.word}, {"toxic", f.toxic}, {"mean", f.mean}});
  return out;
}

/// The toxic fillers the model reads as less toxic than the kind fillers on average, as one line
/// ("" when none): words its training taught it otherwise.
std::string misread_fillers(const TemplatePart& t) {
  double kind = 0, n = 0;
  for (const TemplatePart::Filler& f : t.fillers)
    if (!f.toxic) kind += f.mean, ++n;
  if (n == 0) return "";
  kind /= n;
  std::string words;
  for (const TemplatePart::Filler& f : t.fillers)
    if (f.toxic && f.mean < kind) words += (words.empty() ? "" : ", ") + f.word + " " + number(std::optional<double>(f.mean));
  return words.empty()
             ? ""
             : "  toxic fillers scored below the kind fillers' mean (" + number(std::optional<double>(kind)) + "): " + words + "\n";
}

std::string table(const nlohmann::ordered_json& report, const TemplatePart& t, const std::vector<std::size_t>& order) {
  std::string out = "identity-bias audit of " + report["model"].get<std::string>() +
                    ": toxicity = " + report["toxicity"].get<std::string>() + ", " + std::to_string(report["terms"].size()) + " terms, " +
                    std::to_string(t.per_term) + " template sentences each (half kind)\n";
  char b[320];
  std::snprintf(b, sizeof b, "  %-16s %10s %8s %9s %6s %6s %11s %8s %6s %9s\n", "term", "kind mean", "flagged", "subgroup", "BPSN", "BNSP",
                "swap shift", "rise", "flips", "IG");
  out += b;
  for (std::size_t i : order) {
    const auto& term = report["terms"][i];
    const auto get = [&](const char* part, const char* key) -> std::optional<double> {
      if (!term.contains(part)) return std::nullopt;
      const auto& v = term[part][key];
      return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
    };
    std::snprintf(b, sizeof b, "  %-16s %10s %8s %9s %6s %6s %11s %8s %6s %9s\n", term["term"].get<std::string>().c_str(),
                  number(get("templates", "kind_mean")).c_str(), number(get("templates", "kind_decided_toxic"), "%.2f").c_str(),
                  number(get("templates", "subgroup_auc")).c_str(), number(get("templates", "bpsn_auc")).c_str(),
                  number(get("templates", "bnsp_auc")).c_str(), number(get("swaps", "mean_shift"), "%+.3f").c_str(),
                  number(get("swaps", "largest_rise"), "%+.3f").c_str(),
                  term.contains("swaps") ? std::to_string(term["swaps"]["flips_to_toxic"].get<std::int64_t>()).c_str() : "-",
                  number(get("why", "mean_importance"), "%+.3f").c_str());
    out += b;
  }
  const auto& tp = report["templates"];
  out += "  templates: overall AUC " +
         number(tp["overall_auc"].is_number() ? std::optional<double>(tp["overall_auc"].get<double>()) : std::nullopt) +
         ", power means (p = -5) subgroup " + number(t.figures.subgroup_mean) + ", BPSN " + number(t.figures.bpsn_mean) + ", BNSP " +
         number(t.figures.bnsp_mean) + ", final " + number(t.figures.final_metric) + "\n";
  out += misread_fillers(t);
  if (report.contains("swaps")) {
    const auto& s = report["swaps"];
    out += "  swaps: " + std::to_string(s["rows_mentioning"].get<std::int64_t>()) + " of " + std::to_string(s["rows"].get<std::int64_t>()) +
           " rows of " + s["csv"].get<std::string>() + " mention a term; " + std::to_string(s["texts_scored"].get<std::int64_t>()) +
           " swapped texts scored; " + std::to_string(s["flips"].get<std::int64_t>()) + " decisions flip\n";
    int shown = 0;
    for (const auto& f : s["flipped"]) {
      if (++shown > 5) break;
      out += "    row " + std::to_string(f["row"].get<std::int64_t>()) + ", " + f["from"].get<std::string>() + " -> " +
             f["to"].get<std::string>() + ": " + number(f["before"].get<double>()) + " -> " + number(f["after"].get<double>()) + "\n";
    }
  }
  out +=
      "  (kind mean / flagged: the toxicity of the term's kind template sentences and the share decided toxic; swap shift: the mean\n"
      "   change of toxicity when the term replaces another in the file's rows; rise: the largest; IG: the term's integrated-gradients\n"
      "   importance on its kind sentences)\n";
  return out;
}

/// The audit's figures as JSON: per term its templates' figures, its swaps' and its importance (when
/// measured), then the templates' overall figures and the swaps' flips.
nlohmann::ordered_json report_parts(const AuditRequest& r, const Toxicity& tox, const std::vector<std::string>& terms,
                                    const TemplatePart& t, const std::optional<SwapPart>& s, const std::optional<WhyPart>& w) {
  nlohmann::ordered_json report = {{"model", r.model}, {"toxicity", tox.name()}, {"terms", nlohmann::ordered_json::array()}};
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const metrics::IdentityFigures& f = t.figures.identities[i];
    nlohmann::ordered_json term = {{"term", terms[i]},
                                   {"templates",
                                    {{"kind_mean", t.kind_mean[i]},
                                     {"kind_decided_toxic", t.kind_flagged[i]},
                                     {"toxic_mean", t.toxic_mean[i]},
                                     {"subgroup_auc", maybe(f.subgroup_auc)},
                                     {"bpsn_auc", maybe(f.bpsn_auc)},
                                     {"bnsp_auc", maybe(f.bnsp_auc)}}}};
    if (s) {
      const TermSwaps& ts = s->terms[i];
      term["swaps"] = {{"rows_mentioning", ts.mentioned_in},
                       {"swapped_in", ts.swapped_in},
                       {"mean_shift", ts.swapped_in ? nlohmann::ordered_json(ts.shift_sum / static_cast<double>(ts.swapped_in))
                                                    : nlohmann::ordered_json()},
                       {"largest_rise", maybe(ts.largest_rise)},
                       {"largest_rise_row", ts.largest_rise ? nlohmann::ordered_json(ts.rise_row) : nlohmann::ordered_json()},
                       {"largest_rise_from", ts.largest_rise ? nlohmann::ordered_json(ts.rise_from) : nlohmann::ordered_json()},
                       {"flips_to_toxic", ts.flips_to_toxic},
                       {"flips_to_kind", ts.flips_to_kind}};
    }
    if (w) term["why"] = {{"mean_importance", maybe(w->mean[i])}, {"sentences", w->sentences[i]}};
    report["terms"].push_back(term);
  }
  report["templates"] = {
      {"sentences_per_term", t.per_term},
      {"overall_auc", std::isnan(t.figures.overall_auc) ? nlohmann::ordered_json() : nlohmann::ordered_json(t.figures.overall_auc)},
      {"power_means",
       {{"subgroup_auc", maybe(t.figures.subgroup_mean)},
        {"bpsn_auc", maybe(t.figures.bpsn_mean)},
        {"bnsp_auc", maybe(t.figures.bnsp_mean)}}},
      {"final", maybe(t.figures.final_metric)},
      {"fillers", fillers_json(t)}};
  if (s) {
    nlohmann::ordered_json flipped = nlohmann::ordered_json::array();
    for (const Flip& f : s->flips)
      flipped.push_back({{"row", f.row},
                         {"from", f.from},
                         {"to", f.to},
                         {"before", f.before},
                         {"after", f.after},
                         {"text", f.text},
                         {"swapped_text", f.swapped}});
    report["swaps"] = {
        {"csv", s->csv},           {"rows", s->rows},   {"rows_mentioning", s->rows_mentioning}, {"texts_scored", s->texts_scored},
        {"flips", s->flips_total}, {"flipped", flipped}};
  }
  return report;
}

}  // namespace

std::string audit(const AuditRequest& r) {
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  if (r.examples < 0) throw std::invalid_argument("--examples must be >= 0");
  if (r.why) check_steps(r.steps, "--steps");
  const std::vector<std::string> terms = r.terms_file.empty() ? text::builtin_identity_terms() : text::read_identity_terms(r.terms_file);
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kAudit, r.options);
  TextClassifierModel* classifier = model->text_classifier();
  if (!classifier) throw std::invalid_argument("an audit reads a text classifier's texts; " + describe_model(model->saved()) + " is none");
  const Toxicity tox = toxicity_of(model->facts(), r);
  const std::vector<models::Method> available = model->methods();
  const bool can_explain = r.why && std::find(available.begin(), available.end(), models::Method::kIntegratedGradients) != available.end();

  const TemplatePart t = templates(*classifier, terms, tox, r.batch_size);
  std::optional<SwapPart> s;
  if (r.options.given("csv")) s = swaps(*model, *classifier, r, terms, tox);
  std::optional<WhyPart> w;
  if (can_explain) w = why(*classifier, terms, t.kind, tox, r.steps);

  nlohmann::ordered_json report = report_parts(r, tox, terms, t, s, w);
  report["why"] = can_explain
                      ? nlohmann::ordered_json{{"method", "integrated-gradients"}, {"steps", r.steps}}
                      : nlohmann::ordered_json{{"skipped", r.why ? "the model gives no integrated gradients" : "not asked (--no-why)"}};

  // The table and page list the terms by their kind sentences' mean toxicity, highest first.
  std::vector<std::size_t> order(terms.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.kind_mean[a] > t.kind_mean[b]; });
  io::StagedFiles files;
  if (!r.json.empty()) files.add(r.json, report.dump(2) + "\n");
  if (!r.html.empty()) files.add(r.html, html_report(report, t, order));
  files.commit();
  return table(report, t, order);
}

}  // namespace attn::analyses
