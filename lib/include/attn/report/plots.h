#pragma once
/// Pictures of attention: a bar chart of weights per name (seed 001's attention-vector chart) and a
/// heatmap of an attention matrix (seed 002's output x input alignment), as self-contained SVG,
/// as an HTML page, and as text for a terminal. Labels are escaped; values are expected in [0, 1].
#include <string>
#include <vector>

namespace attn::report {

/// Vertical bars, one per name, value printed above each.
std::string svg_bar_chart(const std::string& title, const std::vector<std::string>& names, const std::vector<double>& values);

/// A grid of rows x columns cells shaded by `values` (row-major), row labels left, column labels on top.
std::string svg_heatmap(const std::string& title, const std::vector<std::string>& row_labels, const std::vector<std::string>& column_labels,
                        const std::vector<float>& values);

/// The same grid as text: one line per row, one shade character per column (" .:-=+*#%@").
std::string text_heatmap(const std::vector<std::string>& row_labels, const std::vector<std::string>& column_labels,
                         const std::vector<float>& values);

/// An HTML page holding `body` (SVG or HTML) under a heading.
std::string html_page(const std::string& title, const std::string& body);

/// A table cell's shading, ` style="background:..."`: white at 0, deepening to red at 1 (`x`
/// clamped to [0, 1]); the heat of tables that are heatmaps (an identity x metric table).
std::string heat_style(double x);

/// printf's format `f` (one conversion, e.g. "%.4f") of `value`.
std::string formatted(const char* f, double value);

/// &, <, >, " escaped.
std::string xml_escape(const std::string& s);

/// A label fit to show one character: a space becomes "␣", other control characters "?".
std::string visible(const std::string& token);

}  // namespace attn::report
