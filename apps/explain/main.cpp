// attn explain: label probabilities and per-word attention of texts (seed 000's get_word_importances).
#include <cmath>
#include <cstdio>
#include <iostream>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/io/threads.h"
#include "attn/data/tables.h"
#include "attn/models/explain.h"
#include "attn/report/plots.h"
#include "attn/text/unicode.h"

namespace attn::apps {
namespace {

nlohmann::ordered_json to_json(const models::Explanation& e) {
  nlohmann::ordered_json probs = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) probs[e.label_names[k]] = e.probabilities[k];
  nlohmann::ordered_json words = nlohmann::ordered_json::array();
  for (const auto& w : e.words) {
    nlohmann::ordered_json j = {{"word", w.word}, {"tokens", w.tokens}, {"weight", w.weight}, {"status", w.status}};
    if (!w.reason.empty()) j["reason"] = w.reason;
    words.push_back(j);
  }
  nlohmann::ordered_json out;
  out["text"] = e.text;
  out["probabilities"] = probs;
  out["words"] = words;
  out["ids"] = e.ids;
  out["attention"] = e.attention;
  if (!e.self_attention.empty()) out["self_attention"] = e.self_attention;  // [layer][head][query * T + key]
  return out;
}

nlohmann::ordered_json to_json(const models::FeatureExplanation& e) {
  nlohmann::ordered_json features = nlohmann::ordered_json::array();
  for (std::size_t f = 0; f < e.feature_names.size(); ++f)
    features.push_back({{"feature", e.feature_names[f]}, {"value", e.values[f]}, {"weight", e.attention[f]}});
  return {{"probability", e.probability}, {"label", e.label_name}, {"features", features}};
}

nlohmann::ordered_json to_json(const models::TranslationExplanation& e) {
  return {{"source", e.source}, {"output", e.output}, {"source_tokens", e.source_tokens},
          {"output_tokens", e.output_tokens}, {"attention", e.attention}};
}

void print_features(const models::FeatureExplanation& e) {
  std::printf("P(%s = 1) = %.4f\n", e.label_name.c_str(), e.probability);
  for (std::size_t f = 0; f < e.feature_names.size(); ++f) {
    const int bar = static_cast<int>(std::lround(e.attention[f] * 40));
    std::printf("  %-16s %10.4f  weight %.4f %s\n", e.feature_names[f].c_str(), e.values[f], e.attention[f],
                std::string(static_cast<std::size_t>(bar), '#').c_str());
  }
  std::printf("\n");
}

void print_translation(const models::TranslationExplanation& e) {
  std::printf("%s -> %s\n", e.source.c_str(), e.output.c_str());
  std::printf("%s\n", report::text_heatmap(e.output_tokens, e.source_tokens, e.attention).c_str());
}

/// OUT.svg for the first of several pictures, OUT-2.svg, OUT-3.svg ... for the others.
std::string numbered(const std::string& path, std::size_t i) {
  if (i == 0) return path;
  const std::size_t dot = path.rfind('.');
  const std::string n = "-" + std::to_string(i + 1);
  return dot == std::string::npos || path.find('/', dot) != std::string::npos ? path + n : path.substr(0, dot) + n + path.substr(dot);
}

std::string translation_svg(const models::TranslationExplanation& e) {
  return report::svg_heatmap(e.source + " -> " + e.output, e.output_tokens, e.source_tokens, e.attention);
}

/// Rows of numbers: "v1,v2,...,vD" arguments, or rows of a CSV.
std::vector<float> feature_rows(const cxxopts::ParseResult& r, const models::SavedModel& model) {
  const auto names = model.config.at("data").at("features").get<std::vector<std::string>>();
  std::vector<float> values;
  if (r.count("csv")) {
    const data::FeatureTable t =
        data::read_feature_csv(r["csv"].as<std::string>(), names, model.config.at("data").value("label", "label"), true);
    std::vector<std::int64_t> rows = {1};
    if (r.count("rows")) rows = r["rows"].as<std::vector<std::int64_t>>();
    for (std::int64_t row : rows) {
      if (row < 1 || row > t.rows)
        throw UsageError("--rows: row " + std::to_string(row) + " is not in 1.." + std::to_string(t.rows));
      const auto d = static_cast<std::int64_t>(names.size());
      values.insert(values.end(), t.values.begin() + (row - 1) * d, t.values.begin() + row * d);
    }
    return values;
  }
  for (const std::string& arg : r.unmatched()) {
    const std::vector<std::string> fields = split_list(arg);
    if (fields.size() != names.size())
      throw UsageError("'" + arg + "': expected " + std::to_string(names.size()) + " comma-separated values (" +
                       std::to_string(fields.size()) + " given)");
    for (const std::string& f : fields) {
      char* end = nullptr;
      const double v = std::strtod(f.c_str(), &end);
      if (end == f.c_str() || *end != '\0' || !std::isfinite(v)) throw UsageError("'" + f + "' in '" + arg + "' is not a number");
      values.push_back(static_cast<float>(v));
    }
  }
  if (values.empty()) throw UsageError("give rows as VALUE,VALUE,... arguments or --csv FILE [--rows N,...]");
  return values;
}

void print_text(const models::Explanation& e) {
  std::printf("%s\n ", e.text.c_str());
  if (e.ids.empty()) std::printf(" (no word of this text is in the model's vocabulary: the probabilities are the model's bias)\n ");
  for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k)
    std::printf(" %s %.4f", e.label_names[k].c_str(), e.probabilities[k]);
  std::printf("\n");
  for (const auto& w : e.words) {
    if (w.status == "kept" || w.status == "oov") {
      const int bar = static_cast<int>(std::lround(w.weight * 40));
      std::printf("  %-20s %.4f %s%s\n", w.word.c_str(), w.weight, std::string(static_cast<std::size_t>(bar), '#').c_str(),
                  w.status == "oov" ? "  (as the OOV word)" : "");
    } else {
      std::printf("  %-20s %s (%s)\n", w.word.c_str(), w.status.c_str(), w.reason.c_str());
    }
  }
  std::printf("\n");
}

std::string to_html(const std::vector<models::Explanation>& all) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>attn explain</title><style>"
      "body{font-family:sans-serif;margin:2em;max-width:60em}.text{margin:1.5em 0;padding:1em;border:1px solid #ccc}"
      ".w{padding:2px 3px;margin:1px;border-radius:3px;display:inline-block}.dropped{color:#999;text-decoration:line-through}"
      "table{border-collapse:collapse;margin-top:.5em}td{padding:2px 8px;font-size:90%}</style></head><body>\n"
      "<h1>Word attention</h1><p>Each word is shaded by its attention weight; struck-through words were dropped by "
      "the tokenizer (hover for the reason).</p>\n";
  for (const auto& e : all) {
    double max_w = 0;
    for (const auto& w : e.words) max_w = std::max(max_w, w.weight);
    h += "<div class=\"text\"><div>";
    for (const auto& w : e.words) {
      char style[128];
      const double a = max_w > 0 ? w.weight / max_w : 0;
      std::snprintf(style, sizeof style, "background:rgba(220,40,40,%.3f)", a);
      if (w.status == "kept" || w.status == "oov")
        h += "<span class=\"w\" style=\"" + std::string(style) + "\" title=\"" + std::to_string(w.weight) + "\">" +
             report::xml_escape(w.word) + "</span> ";
      else
        h += "<span class=\"w dropped\" title=\"" + report::xml_escape(w.reason) + "\">" + report::xml_escape(w.word) + "</span> ";
    }
    h += "</div><table>";
    for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) {
      char row[256];
      std::snprintf(row, sizeof row, "<tr><td>%s</td><td>%.4f</td><td><div style=\"background:#c33;height:8px;width:%dpx\"></div></td></tr>",
                    report::xml_escape(e.label_names[k]).c_str(), e.probabilities[k], static_cast<int>(e.probabilities[k] * 200));
      h += row;
    }
    h += "</table></div>\n";
  }
  return h + "</body></html>\n";
}

int run(int argc, char** argv) {
  cxxopts::Options options(
      "attn explain",
      "Show what a trained model attends to. Text classifiers: label probabilities and every word's weight.\n"
      "feature-attention: the probability and every feature's weight for rows given as VALUE,VALUE,... (after\n"
      "-- when one starts with '-') or --csv FILE --rows N,... seq2seq-attention: the output and its attention\n"
      "matrix (output x input). Texts come as arguments, or one per stdin line.\n\n"
      "  attn explain --model runs/toxic \"ice cream\" \"ice cream sucks\"\n"
      "  attn explain --model runs/features --csv features.csv --rows 1,2 --svg row-attention.svg\n"
      "  attn explain --model runs/features -- -0.5,1.2,0.8,0,0,0,0,0,0,0\n"
      "  attn explain --model runs/dates \"saturday 9 may 1998\" --svg dates.svg");
  options.positional_help("TEXT...");
  options.add_options("Input")
      ("model", "Run directory or model.pt", cxxopts::value<std::string>())
      ("csv", "feature-attention: read rows from this CSV", cxxopts::value<std::string>())
      ("rows", "feature-attention: 1-based data rows of --csv (default 1)", cxxopts::value<std::vector<std::int64_t>>());
  options.add_options("Output")
      ("json", "One JSON object per input (JSON Lines); text models with self-attention add it per layer and head")
      ("html", "Also write a self-contained HTML page of the attention", cxxopts::value<std::string>())
      ("svg", "Also draw the attention as SVG (feature weights as bars; seq2seq: one heatmap per input, OUT-2.svg ...)",
       cxxopts::value<std::string>());
  add_threads_option(options);
  // Texts are taken as they are (cxxopts' positional lists would split them at commas).
  const auto parsed = parse_or_help(options, argc, argv, /*takes_positional=*/true);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  io::set_torch_threads(threads_option(r));
  models::SavedModel model = models::load_model(required<std::string>(r, "model"));
  const bool json = r.count("json") > 0;

  if (model.task == models::TaskKind::kFeatureClassification) {
    const auto all = models::explain_features(model, feature_rows(r, model));
    std::vector<double> mean(all.front().feature_names.size(), 0.0);
    for (const auto& e : all) {
      if (json)
        std::printf("%s\n", to_json(e).dump().c_str());
      else
        print_features(e);
      for (std::size_t f = 0; f < mean.size(); ++f) mean[f] += e.attention[f] / static_cast<double>(all.size());
    }
    const std::string title = all.size() == 1 ? "Attention per feature" : "Mean attention per feature (" + std::to_string(all.size()) + " rows)";
    const std::string svg = report::svg_bar_chart(title, all.front().feature_names, mean);
    if (r.count("svg")) io::write_file_atomic(r["svg"].as<std::string>(), svg);
    if (r.count("html")) io::write_file_atomic(r["html"].as<std::string>(), report::html_page("attn explain", svg));
    return kExitOk;
  }
  if (r.count("csv") || r.count("rows")) throw UsageError("--csv and --rows are for feature-attention models");

  std::vector<std::string> texts;
  if (!r.unmatched().empty()) {
    texts = r.unmatched();
  } else {
    std::string line;
    while (std::getline(std::cin, line)) texts.push_back(line);
  }
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (text::find_invalid_utf8(texts[i]) != std::string::npos)
      throw std::runtime_error("text " + std::to_string(i + 1) + ": invalid UTF-8");

  if (model.task == models::TaskKind::kSequenceToSequence) {
    if (texts.empty()) return kExitOk;
    const auto all = models::explain_translations(model, texts);
    std::string html;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (json)
        std::printf("%s\n", to_json(all[i]).dump().c_str());
      else
        print_translation(all[i]);
      const std::string svg = translation_svg(all[i]);
      if (r.count("svg")) io::write_file_atomic(numbered(r["svg"].as<std::string>(), i), svg);
      html += "<div>" + svg + "</div>\n";
    }
    if (r.count("html")) io::write_file_atomic(r["html"].as<std::string>(), report::html_page("Attention: output x input", html));
    return kExitOk;
  }

  if (r.count("svg")) throw UsageError("--svg is for feature-attention and seq2seq-attention models (text models: --html)");
  std::vector<models::Explanation> all;
  for (const auto& t : texts) {
    all.push_back(models::explain(model, t));
    if (json)
      std::printf("%s\n", to_json(all.back()).dump().c_str());
    else
      print_text(all.back());
  }
  if (r.count("html")) io::write_file_atomic(r["html"].as<std::string>(), to_html(all));
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn explain", [&] { return attn::apps::run(argc, argv); });
}
