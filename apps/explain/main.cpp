// attn explain: label probabilities and per-word attention of texts (seed 000's get_word_importances).
#include <cmath>
#include <cstdio>
#include <iostream>

#include "../common/app.h"
#include "attn/io/atomic_file.h"
#include "attn/io/threads.h"
#include "attn/models/explain.h"
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
  return out;
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

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
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
             html_escape(w.word) + "</span> ";
      else
        h += "<span class=\"w dropped\" title=\"" + html_escape(w.reason) + "\">" + html_escape(w.word) + "</span> ";
    }
    h += "</div><table>";
    for (std::size_t k = 0; k < e.label_names.size() && k < e.probabilities.size(); ++k) {
      char row[256];
      std::snprintf(row, sizeof row, "<tr><td>%s</td><td>%.4f</td><td><div style=\"background:#c33;height:8px;width:%dpx\"></div></td></tr>",
                    html_escape(e.label_names[k]).c_str(), e.probabilities[k], static_cast<int>(e.probabilities[k] * 200));
      h += row;
    }
    h += "</table></div>\n";
  }
  return h + "</body></html>\n";
}

int run(int argc, char** argv) {
  cxxopts::Options options("attn explain",
                           "Show a trained model's label probabilities for texts and every word's attention weight.\n"
                           "Texts come as arguments, or one per stdin line.\n\n"
                           "  attn explain --model runs/toxic \"ice cream\" \"ice cream sucks\"");
  options.positional_help("TEXT...");
  options.add_options("Input")("model", "Run directory or model.pt", cxxopts::value<std::string>());
  options.add_options("Output")
      ("json", "One JSON object per text (JSON Lines)")
      ("html", "Also write a self-contained HTML page highlighting each word", cxxopts::value<std::string>());
  add_threads_option(options);
  // Texts are taken as they are (cxxopts' positional lists would split them at commas).
  const auto parsed = parse_or_help(options, argc, argv, /*takes_positional=*/true);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  io::set_torch_threads(threads_option(r));
  models::SavedModel model = models::load_model(required<std::string>(r, "model"));
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
  std::vector<models::Explanation> all;
  for (const auto& t : texts) {
    all.push_back(models::explain(model, t));
    if (r.count("json"))
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
