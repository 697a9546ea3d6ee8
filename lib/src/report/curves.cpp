#include "attn/report/curves.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/report/plots.h"

namespace attn::report {
namespace {

struct Run {
  std::string name;
  std::vector<nlohmann::json> epochs;
};

Run read_run(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir) / "metrics.jsonl").string();
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open (a run directory of attn train?)");
  Run run{fs::path(dir).lexically_normal().filename().string(), {}};
  if (run.name.empty() || run.name == ".") run.name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      run.epochs.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(n) + ": not a JSON record");
    }
  }
  if (run.epochs.empty()) throw std::runtime_error(path + ": no epochs yet");
  return run;
}

/// Which rows of metrics.jsonl a line draws: the training figures (solid) or the validation ones (dashed).
enum class Rows { kTraining, kValidation };

struct Series {
  std::string color;
  Rows rows;
  std::vector<std::pair<double, double>> points;  ///< (epoch, value)
  std::vector<bool> best;
};

std::string fmt(double v, const char* f = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// One panel at (x0, y0): axes with ticks, and the series as polylines.
std::string panel(double x0, double y0, const std::string& title, const std::vector<Series>& series, int epochs) {
  const double w = 380, h = 240, left = 50, bottom = 30;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : series)
    for (const auto& [x, y] : s.points) lo = std::min(lo, y), hi = std::max(hi, y);
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  const auto X = [&](double e) { return x0 + left + (epochs > 1 ? (e - 1) / (epochs - 1) : 0.5) * (w - left - 10); };
  const auto Y = [&](double v) { return y0 + 20 + (1 - (v - lo) / (hi - lo)) * (h - 20 - bottom); };
  std::string s = "<text x=\"" + fmt(x0 + w / 2) + "\" y=\"" + fmt(y0 + 12) + "\" text-anchor=\"middle\" font-size=\"13\">" +
                  xml_escape(title) + "</text>\n";
  s += "<line x1=\"" + fmt(x0 + left) + "\" y1=\"" + fmt(y0 + h - bottom) + "\" x2=\"" + fmt(x0 + w - 10) + "\" y2=\"" +
       fmt(y0 + h - bottom) + "\" stroke=\"#333\"/>\n";
  s += "<line x1=\"" + fmt(x0 + left) + "\" y1=\"" + fmt(y0 + 20) + "\" x2=\"" + fmt(x0 + left) + "\" y2=\"" + fmt(y0 + h - bottom) +
       "\" stroke=\"#333\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double v = lo + (hi - lo) * i / 4;
    s += "<text x=\"" + fmt(x0 + left - 4) + "\" y=\"" + fmt(Y(v) + 4) + "\" text-anchor=\"end\" font-size=\"10\">" + fmt(v, "%.3g") +
         "</text>\n<line x1=\"" + fmt(x0 + left) + "\" y1=\"" + fmt(Y(v)) + "\" x2=\"" + fmt(x0 + w - 10) + "\" y2=\"" + fmt(Y(v)) +
         "\" stroke=\"#eee\"/>\n";
  }
  const int step = std::max(1, epochs / 10);
  for (int e = 1; e <= epochs; e += step)
    s += "<text x=\"" + fmt(X(e)) + "\" y=\"" + fmt(y0 + h - bottom + 14) + "\" text-anchor=\"middle\" font-size=\"10\">" +
         std::to_string(e) + "</text>\n";
  s += "<text x=\"" + fmt(x0 + w / 2) + "\" y=\"" + fmt(y0 + h - 2) + "\" text-anchor=\"middle\" font-size=\"10\">epoch</text>\n";
  for (const Series& line : series) {
    std::string points;
    for (const auto& [x, y] : line.points) points += fmt(X(x)) + "," + fmt(Y(y)) + " ";
    s += "<polyline fill=\"none\" stroke=\"" + line.color + "\" stroke-width=\"2\"" +
         (line.rows == Rows::kValidation ? " stroke-dasharray=\"6,4\"" : "") + " points=\"" + points + "\"/>\n";
    for (std::size_t i = 0; i < line.points.size(); ++i) {
      const auto& [x, y] = line.points[i];
      s += "<circle cx=\"" + fmt(X(x)) + "\" cy=\"" + fmt(Y(y)) + "\" r=\"" + (line.best[i] ? "5" : "2.5") + "\" fill=\"" +
           (line.best[i] ? "none" : line.color) + "\" stroke=\"" + line.color + "\"><title>epoch " + fmt(x, "%.0f") + ": " +
           fmt(y, "%.5g") + "</title></circle>\n";
    }
  }
  return s;
}

Series series_of(const Run& run, const std::string& key, const std::string& color, Rows rows) {
  Series s{color, rows, {}, {}};
  for (const auto& e : run.epochs)
    if (e.contains(key) && e[key].is_number()) {
      s.points.emplace_back(e.value("epoch", 0), e[key].get<double>());
      s.best.push_back(rows == Rows::kValidation && e.value("best", false));
    }
  return s;
}

}  // namespace

std::string training_curves_svg(const std::vector<std::string>& run_dirs) {
  static const char* const kColors[] = {"#c0392b", "#2471a3", "#229954", "#8e44ad", "#d68910", "#17a589", "#5d6d7e"};
  std::vector<Run> runs;
  for (const std::string& dir : run_dirs) runs.push_back(read_run(dir));
  if (runs.empty()) throw std::invalid_argument("give one or more run directories");
  // The main metric: the first the runs report, in this order.
  std::string metric = "accuracy";
  for (const char* candidate : {"val_mean_auc", "val_exact_match"})
    if (runs.front().epochs.front().contains(candidate)) {
      metric = candidate;
      break;
    }
  int epochs = 1;
  std::vector<Series> loss, main;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string color = kColors[i % (sizeof kColors / sizeof *kColors)];
    for (const auto& e : runs[i].epochs) epochs = std::max(epochs, e.value("epoch", 1));
    loss.push_back(series_of(runs[i], "loss", color, Rows::kTraining));
    loss.push_back(series_of(runs[i], "val_loss", color, Rows::kValidation));
    if (metric == "accuracy") main.push_back(series_of(runs[i], "accuracy", color, Rows::kTraining));
    main.push_back(series_of(runs[i], metric == "accuracy" ? "val_accuracy" : metric, color, Rows::kValidation));
  }
  const double height = 300 + 22.0 * static_cast<double>(runs.size());
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"" + fmt(height, "%.0f") +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += panel(10, 10, "loss (training solid, validation dashed)", loss, epochs);
  s += panel(410, 10, metric + (metric == "accuracy" ? " (training solid, validation dashed)" : ""), main, epochs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double y = 280 + 22.0 * static_cast<double>(i);
    s += "<line x1=\"60\" y1=\"" + fmt(y) + "\" x2=\"90\" y2=\"" + fmt(y) + "\" stroke=\"" +
         kColors[i % (sizeof kColors / sizeof *kColors)] + "\" stroke-width=\"3\"/><text x=\"98\" y=\"" + fmt(y + 4) + "\">" +
         xml_escape(runs[i].name) + "</text>\n";
  }
  return s + "<text x=\"790\" y=\"" + fmt(height - 8) +
         "\" text-anchor=\"end\" font-size=\"10\" fill=\"#666\">ringed: the best epoch</text>\n</svg>\n";
}

}  // namespace attn::report
