// Text classifiers' data for bias-aware training and the bias metric: the identity columns, the
// rows' weights in the loss, auxiliary labels (see text_dataset.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "attn/io/atomic_file.h"
#include "attn/metrics/bias.h"
#include "attn/text/csv.h"
#include "text_dataset.h"

namespace attn::tasks {
namespace {

/// A number in a column of `csv`, or an error naming its file, line and column.
double weight_value(const std::string& v, const std::string& csv, const text::CsvRecord& record, std::size_t column,
                    const std::string& name) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= 0) || !std::isfinite(d))
    throw std::runtime_error(csv + ":" + std::to_string(record.line) + ": column " + std::to_string(column + 1) + " (" + name +
                             "): a weight must be a number >= 0, got '" + v + "'");
  return d;
}

}  // namespace

IdentityColumns read_identities(const std::string& csv, const std::vector<std::string>& names, text::TableFormat format) {
  text::CsvReader reader(csv, format);
  IdentityColumns out;
  std::vector<std::size_t> columns;
  if (names.empty()) {
    for (const std::string& name : metrics::scored_identities())
      if (const auto c = reader.find_column(name)) out.names.push_back(name), columns.push_back(*c);
  } else {
    for (const std::string& name : names) {
      if (std::find(out.names.begin(), out.names.end(), name) != out.names.end())
        throw std::invalid_argument("--identities: '" + name + "' is named twice");
      out.names.push_back(name);
      columns.push_back(reader.column(name));  // a missing column: an error listing the file's
    }
  }
  out.values.resize(out.names.size());
  if (out.names.empty()) return out;
  text::CsvRecord record;
  while (reader.next(record)) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& v = record.fields[columns[i]];
      float x = std::numeric_limits<float>::quiet_NaN();
      if (!v.empty() && v != "nan" && v != "NaN" && v != "null") {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (*end != '\0' || !(d >= 0 && d <= 1))
          throw std::runtime_error(csv + ":" + std::to_string(record.line) + ": column " + std::to_string(columns[i] + 1) + " (" +
                                   out.names[i] + "): an identity must be a number in [0, 1] or empty, got '" + v + "'");
        x = static_cast<float>(d);
      }
      out.values[i].push_back(x);
    }
  }
  return out;
}

std::vector<float> read_row_weights(data::Prepared& prepared, const std::string& csv, text::TableFormat format, TextDataConfig& config) {
  const auto n = static_cast<std::size_t>(prepared.data.x.rows);
  std::vector<double> w(n, 1.0);
  nlohmann::json report = nlohmann::json::object();
  if (!config.weight_column.empty()) {
    text::CsvReader reader(csv, format);
    const std::size_t c = reader.column(config.weight_column);  // a missing column: an error listing the file's
    text::CsvRecord record;
    std::size_t r = 0;
    for (; reader.next(record); ++r)
      if (r < n) w[r] *= weight_value(record.fields[c], csv, record, c, config.weight_column);
    if (r != n) throw std::logic_error(csv + ": " + std::to_string(r) + " weights read, " + std::to_string(n) + " rows prepared");
    report["column"] = config.weight_column;
  }
  if (config.identity_weighting) {
    const IdentityColumns id = read_identities(csv, config.identities, format);
    if (id.names.empty())
      throw std::invalid_argument("--identity-weighting: " + csv +
                                  " has none of the 2019 competition's scored identity columns (--identities names them)");
    config.identities = id.names;
    const std::size_t L = prepared.data.label_names.size();
    std::vector<std::uint8_t> positive(n);
    for (std::size_t r = 0; r < n; ++r) positive[r] = prepared.data.labels[r * L] > 0.5f;
    const std::vector<float> iw = metrics::identity_weights(positive, id.values);
    std::int64_t counts[4] = {0, 0, 0, 0};  // background negatives and positives, subgroup positives and negatives
    for (std::size_t r = 0; r < n; ++r) {
      w[r] *= iw[r];
      bool in = false;
      for (const auto& v : id.values) in = in || v[r] >= 0.5f;
      ++counts[(in ? 2 : 0) + (in ? !positive[r] : positive[r])];
    }
    report["identity_weighting"] = {{"identities", id.names},
                                    {"label", prepared.data.label_names.front()},
                                    {"background_negatives", counts[0]},
                                    {"background_positives", counts[1]},
                                    {"subgroup_positives", counts[2]},
                                    {"subgroup_negatives", counts[3]}};
  }
  double sum = 0;
  for (double v : w) sum += v;
  if (!(sum > 0)) throw std::invalid_argument(csv + ": every row's weight is 0 (--weight-column " + config.weight_column + ")");
  const double scale = static_cast<double>(n) / sum;
  std::vector<float> out(n);
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (std::size_t r = 0; r < n; ++r) {
    out[r] = static_cast<float>(w[r] * scale);
    lo = std::min(lo, w[r] * scale), hi = std::max(hi, w[r] * scale);
  }
  report["scaled_to_mean_1"] = {{"min", lo}, {"max", hi}};
  prepared.report["row_weights"] = report;
  return out;
}

std::vector<float> read_row_weights_file(const std::string& path, std::int64_t rows) {
  std::vector<float> w;
  try {
    w = nlohmann::json::parse(io::read_file(path)).at("weights").get<std::vector<float>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not the rows' weights: " + e.what());
  }
  if (static_cast<std::int64_t>(w.size()) != rows)
    throw std::runtime_error(path + ": " + std::to_string(w.size()) + " weights for the data's " + std::to_string(rows) + " rows");
  return w;
}

void add_aux_labels(text::TextCsvOptions& columns, const TextDataConfig& config) {
  if (!config.aux_labels.empty() && !columns.class_column.empty())
    throw std::invalid_argument("--aux-labels adds 0/1 label columns; this model reads one class per row (--label-column)");
  if (config.identity_weighting && !columns.class_column.empty())
    throw std::invalid_argument(
        "--identity-weighting weighs the first 0/1 label's positives; this model reads one class per row (--label-column)");
  for (const std::string& aux : config.aux_labels) {
    if (std::count(columns.label_columns.begin(), columns.label_columns.end(), aux))
      throw std::invalid_argument(
          "--aux-labels: '" + aux + "' is " +
          (std::count(config.aux_labels.begin(), config.aux_labels.end(), aux) > 1 ? "named twice" : "one of --labels"));
    columns.label_columns.push_back(aux);
  }
}

}  // namespace attn::tasks
