#include "attn/report/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn::report {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string visible(const std::string& token) {
  if (token == " ") return "\u2423";
  if (token.size() == 1 && static_cast<unsigned char>(token[0]) < 0x20) return "?";
  return token;
}

std::string formatted(const char* f, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, value);
  return buf;
}

namespace {

/// White to dark red.
std::string shade(double v) {
  v = std::clamp(v, 0.0, 1.0);
  const int g = static_cast<int>(std::lround(255 * (1 - v))), r = static_cast<int>(std::lround(255 - 75 * v));
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, g);
  return buf;
}

}  // namespace

std::string svg_bar_chart(const std::string& title, const std::vector<std::string>& names, const std::vector<double>& values) {
  const double bar = 36, gap = 12, left = 50, top = 40, height = 240, bottom = 70;
  const double width = left + static_cast<double>(names.size()) * (bar + gap) + gap;
  double top_value = 0;
  for (double v : values) top_value = std::max(top_value, v);
  top_value = top_value > 0 ? top_value : 1;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + formatted("%.0f", width) + "\" height=\"" +
                  formatted("%.0f", top + height + bottom) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<text x=\"" + formatted("%.0f", width / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + xml_escape(title) +
       "</text>\n";
  s += "<line x1=\"" + formatted("%.0f", left) + "\" y1=\"" + formatted("%.0f", top + height) + "\" x2=\"" + formatted("%.0f", width) +
       "\" y2=\"" + formatted("%.0f", top + height) + "\" stroke=\"#333\"/>\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double v = i < values.size() ? values[i] : 0, h = height * v / top_value;
    const double x = left + gap + static_cast<double>(i) * (bar + gap);
    s += "<rect x=\"" + formatted("%.1f", x) + "\" y=\"" + formatted("%.1f", top + height - h) + "\" width=\"" + formatted("%.0f", bar) +
         "\" height=\"" + formatted("%.1f", h) + "\" fill=\"#c0392b\"><title>" + xml_escape(names[i]) + ": " + formatted("%.4f", v) +
         "</title></rect>\n";
    s += "<text x=\"" + formatted("%.1f", x + bar / 2) + "\" y=\"" + formatted("%.1f", top + height - h - 4) +
         "\" text-anchor=\"middle\" font-size=\"10\">" + formatted("%.3f", v) + "</text>\n";
    s += "<text transform=\"translate(" + formatted("%.1f", x + bar / 2) + "," + formatted("%.0f", top + height + 14) +
         ") rotate(30)\" font-size=\"11\">" + xml_escape(names[i]) + "</text>\n";
  }
  return s + "</svg>\n";
}

std::string svg_heatmap(const std::string& title, const std::vector<std::string>& rows, const std::vector<std::string>& columns,
                        const std::vector<float>& values) {
  const double cell = 22, left = 40, top = 60;
  const double width = left + static_cast<double>(columns.size()) * cell + 10;
  const double height = top + static_cast<double>(rows.size()) * cell + 10;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + formatted("%.0f", std::max(width, 200.0)) + "\" height=\"" +
                  formatted("%.0f", height) + "\" font-family=\"monospace\" font-size=\"13\">\n";
  s += "<text x=\"4\" y=\"18\" font-family=\"sans-serif\" font-size=\"14\">" + xml_escape(title) + "</text>\n";
  for (std::size_t c = 0; c < columns.size(); ++c)
    s += "<text x=\"" + formatted("%.1f", left + (static_cast<double>(c) + 0.5) * cell) + "\" y=\"" + formatted("%.0f", top - 8) +
         "\" text-anchor=\"middle\">" + xml_escape(visible(columns[c])) + "</text>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double y = top + static_cast<double>(r) * cell;
    s += "<text x=\"" + formatted("%.0f", left - 8) + "\" y=\"" + formatted("%.1f", y + cell * 0.7) + "\" text-anchor=\"end\">" +
         xml_escape(visible(rows[r])) + "</text>\n";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const float v = r * columns.size() + c < values.size() ? values[r * columns.size() + c] : 0.0f;
      s += "<rect x=\"" + formatted("%.1f", left + static_cast<double>(c) * cell) + "\" y=\"" + formatted("%.1f", y) + "\" width=\"" +
           formatted("%.0f", cell) + "\" height=\"" + formatted("%.0f", cell) + "\" fill=\"" + shade(v) + "\" stroke=\"#eee\"><title>" +
           xml_escape(rows[r]) + " / " + xml_escape(columns[c]) + ": " + formatted("%.3f", v) + "</title></rect>\n";
    }
  }
  return s + "</svg>\n";
}

std::string text_heatmap(const std::vector<std::string>& rows, const std::vector<std::string>& columns, const std::vector<float>& values) {
  static const char kShades[] = " .:-=+*#%@";
  std::string s = "    ";
  for (const auto& c : columns) s += visible(c);
  s += "\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    s += "  " + visible(rows[r]) + " ";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const float v = r * columns.size() + c < values.size() ? values[r * columns.size() + c] : 0.0f;
      s += kShades[std::clamp(static_cast<int>(std::lround(v * 9)), 0, 9)];
    }
    s += "\n";
  }
  return s;
}

std::string heat_style(double x) {
  x = std::min(1.0, std::max(0.0, x));
  char b[64];
  std::snprintf(b, sizeof b, " style=\"background:rgb(255,%d,%d)\"", static_cast<int>(255 - 140 * x), static_cast<int>(255 - 150 * x));
  return b;
}

std::string html_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + xml_escape(title) +
         "</title><style>body{font-family:sans-serif;margin:2em}</style></head><body>\n<h1>" + xml_escape(title) + "</h1>\n" + body +
         "</body></html>\n";
}

}  // namespace attn::report
