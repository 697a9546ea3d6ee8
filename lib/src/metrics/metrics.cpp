#include "attn/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "attn/data/inputs.h"
#include "attn/text/unicode.h"

namespace attn::metrics {

double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  const std::size_t n = scores.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney U: sum of the positives' ranks (1-based, ties averaged).
  double rank_sum = 0, positives = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (labels[order[k]] > 0.5f) {
        rank_sum += avg_rank;
        positives += 1;
      }
    i = j;
  }
  const double negatives = static_cast<double>(n) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives);
}

BinaryMetrics binary_metrics(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_labels,
                             const std::vector<bool>& keep) {
  BinaryMetrics e;
  const std::size_t rows = n_labels ? probs.size() / n_labels : 0;
  std::vector<std::vector<float>> col_scores(n_labels), col_labels(n_labels);
  double loss = 0, correct = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    if (!keep.empty() && !keep[r]) {
      ++e.rows_skipped;
      continue;
    }
    ++e.rows;
    for (std::size_t k = 0; k < n_labels; ++k) {
      const float p = probs[r * n_labels + k], y = labels[r * n_labels + k];
      const double pc = std::clamp(static_cast<double>(p), 1e-7, 1.0 - 1e-7);
      loss -= y * std::log(pc) + (1 - y) * std::log(1 - pc);
      correct += ((p > 0.5f) == (y > 0.5f));
      col_scores[k].push_back(p);
      col_labels[k].push_back(y);
    }
  }
  const double cells = static_cast<double>(e.rows) * static_cast<double>(n_labels);
  e.loss = cells ? loss / cells : 0;
  e.accuracy = cells ? correct / cells : 0;
  double sum = 0;
  int defined = 0;
  for (std::size_t k = 0; k < n_labels; ++k) {
    e.auc.push_back(roc_auc(col_scores[k], col_labels[k]));
    if (!std::isnan(e.auc.back())) {
      sum += e.auc.back();
      ++defined;
    }
  }
  e.mean_auc = defined ? sum / defined : std::numeric_limits<double>::quiet_NaN();
  return e;
}

nlohmann::ordered_json number_or_null(double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); }

nlohmann::ordered_json to_json(const BinaryMetrics& m, const std::vector<std::string>& label_names) {
  nlohmann::ordered_json auc = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < label_names.size() && k < m.auc.size(); ++k) auc[label_names[k]] = number_or_null(m.auc[k]);
  nlohmann::ordered_json j;
  j["loss"] = m.loss;
  j["accuracy"] = m.accuracy;
  j["auc"] = auc;
  j["mean_auc"] = number_or_null(m.mean_auc);
  j["rows"] = m.rows;
  j["rows_skipped"] = m.rows_skipped;
  return j;
}

namespace {

/// Per class F1 = 2 tp / (actual + decided) of confusion[the row's class][the decision] (0 where tp
/// is 0), and their mean over the classes among the rows' classes or decisions.
double macro_f1_of(const std::vector<std::vector<std::int64_t>>& confusion, std::vector<double>* precision = nullptr,
                   std::vector<double>* recall = nullptr, std::vector<double>* f1 = nullptr) {
  const std::size_t K = confusion.size();
  double f1_sum = 0, present = 0;
  for (std::size_t k = 0; k < K; ++k) {
    double tp = static_cast<double>(confusion[k][k]), actual = 0, decided = 0;
    for (std::size_t j = 0; j < K; ++j) actual += static_cast<double>(confusion[k][j]), decided += static_cast<double>(confusion[j][k]);
    const double f = tp > 0 ? 2 * tp / (actual + decided) : 0.0;
    if (precision) precision->push_back(decided > 0 ? tp / decided : 0.0);
    if (recall) recall->push_back(actual > 0 ? tp / actual : 0.0);
    if (f1) f1->push_back(f);
    if (actual > 0 || decided > 0) f1_sum += f, present += 1;
  }
  return present ? f1_sum / present : 0;
}

}  // namespace

LogitAdjustment macro_f1_offsets(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_classes) {
  const std::size_t K = n_classes, rows = K ? probs.size() / K : 0;
  std::vector<double> log_p(probs.size());
  std::vector<std::size_t> truth(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* y = labels.data() + r * K;
    truth[r] = static_cast<std::size_t>(std::max_element(y, y + K) - y);
    for (std::size_t k = 0; k < K; ++k) log_p[r * K + k] = std::log(std::max(static_cast<double>(probs[r * K + k]), 1e-12));
  }
  const auto score = [&](const std::vector<double>& b) {
    std::vector<std::vector<std::int64_t>> confusion(K, std::vector<std::int64_t>(K, 0));
    for (std::size_t r = 0; r < rows; ++r) {
      std::size_t best = 0;
      for (std::size_t k = 1; k < K; ++k)
        if (log_p[r * K + k] + b[k] > log_p[r * K + best] + b[best]) best = k;
      ++confusion[truth[r]][best];
    }
    return macro_f1_of(confusion);
  };
  std::vector<double> grid = {0.0};  // by |b|, so that a tie keeps the smaller offset
  for (int i = 1; i <= 20; ++i) grid.push_back(0.1 * i), grid.push_back(-0.1 * i);
  LogitAdjustment out;
  out.offsets.assign(K, 0.0);
  out.before = out.after = score(out.offsets);
  for (int round = 0; round < 20; ++round) {
    bool changed = false;
    for (std::size_t k = 1; k < K; ++k) {
      std::vector<double> b = out.offsets;
      for (double v : grid) {
        b[k] = v;
        const double f = score(b);
        if (f > out.after + 1e-12) out.after = f, out.offsets[k] = v, changed = true;
      }
    }
    if (!changed) break;
  }
  return out;
}

ClassMetrics class_metrics(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_classes,
                           const std::vector<bool>& keep) {
  ClassMetrics m;
  const std::size_t K = n_classes, rows = K ? probs.size() / K : 0;
  m.confusion.assign(K, std::vector<std::int64_t>(K, 0));
  std::vector<std::size_t> truth;  // of the rows kept
  std::vector<const float*> p_of;
  double loss = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    if (!keep.empty() && !keep[r]) {
      ++m.rows_skipped;
      continue;
    }
    const float* p = probs.data() + r * K;
    const float* y = labels.data() + r * K;
    const std::size_t t = static_cast<std::size_t>(std::max_element(y, y + K) - y);
    const std::size_t d = static_cast<std::size_t>(std::max_element(p, p + K) - p);
    loss -= std::log(std::clamp(static_cast<double>(p[t]), 1e-7, 1.0 - 1e-7));
    ++m.confusion[t][d];
    truth.push_back(t);
    p_of.push_back(p);
  }
  m.rows = static_cast<std::int64_t>(truth.size());
  const double n = static_cast<double>(m.rows);
  m.loss = n ? loss / n : 0;
  double right = 0;
  for (std::size_t k = 0; k < K; ++k) right += static_cast<double>(m.confusion[k][k]);
  m.accuracy = n ? right / n : 0;
  m.macro_f1 = macro_f1_of(m.confusion, &m.precision, &m.recall, &m.f1);
  // One-vs-rest per class, then one-vs-one per pair, each an ordinary binary AUC (roc_auc).
  const auto auc_of = [&](std::size_t score_class, std::size_t positive_class, const std::function<bool(std::size_t)>& row_in) {
    std::vector<float> scores, positive;
    for (std::size_t i = 0; i < truth.size(); ++i)
      if (row_in(truth[i])) scores.push_back(p_of[i][score_class]), positive.push_back(truth[i] == positive_class ? 1.0f : 0.0f);
    return roc_auc(scores, positive);
  };
  double sum = 0, defined = 0;
  for (std::size_t k = 0; k < K; ++k) {
    m.auc.push_back(auc_of(k, k, [](std::size_t) { return true; }));
    if (!std::isnan(m.auc.back())) sum += m.auc.back(), defined += 1;
  }
  m.mean_auc = defined ? sum / defined : std::numeric_limits<double>::quiet_NaN();
  double pair_sum = 0, pairs = 0;
  for (std::size_t a = 0; a < K; ++a)
    for (std::size_t b = a + 1; b < K; ++b) {
      const auto of_pair = [a, b](std::size_t t) { return t == a || t == b; };
      const double ab = auc_of(a, a, of_pair), ba = auc_of(b, b, of_pair);
      if (std::isnan(ab) || std::isnan(ba)) continue;  // the rows hold only one of the two
      pair_sum += (ab + ba) / 2, pairs += 1;
    }
  m.ovo_auc = pairs ? pair_sum / pairs : std::numeric_limits<double>::quiet_NaN();
  return m;
}

nlohmann::ordered_json to_json(const ClassMetrics& m, const std::vector<std::string>& names, bool full) {
  const auto by_class = [&](const std::vector<double>& v) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < names.size() && k < v.size(); ++k) j[names[k]] = number_or_null(v[k]);
    return j;
  };
  nlohmann::ordered_json j;
  j["loss"] = m.loss;
  j["accuracy"] = m.accuracy;
  j["macro_f1"] = m.macro_f1;
  j["ovo_auc"] = number_or_null(m.ovo_auc);
  j["mean_auc"] = number_or_null(m.mean_auc);
  j["auc"] = by_class(m.auc);
  if (full) {
    j["precision"] = by_class(m.precision);
    j["recall"] = by_class(m.recall);
    j["f1"] = by_class(m.f1);
    nlohmann::ordered_json confusion = nlohmann::ordered_json::object();
    for (std::size_t t = 0; t < names.size() && t < m.confusion.size(); ++t) {
      nlohmann::ordered_json row = nlohmann::ordered_json::object();
      for (std::size_t d = 0; d < names.size(); ++d) row[names[d]] = m.confusion[t][d];
      confusion[names[t]] = row;
    }
    j["confusion"] = confusion;
  }
  j["rows"] = m.rows;
  j["rows_skipped"] = m.rows_skipped;
  return j;
}

namespace {

/// The given thresholds, one per label; none for "auto".
std::vector<double> parse_thresholds(const std::string& spec, std::size_t n_labels) {
  if (spec == "auto") return {};
  std::vector<double> t;
  for (const std::string& v : data::split_list(spec)) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x >= 0 && x <= 1))
      throw std::invalid_argument("--thresholds: '" + v + "' is not a number in [0, 1]");
    t.push_back(x);
  }
  if (t.size() == 1) t.assign(n_labels, t.front());
  if (t.size() != n_labels)
    throw std::invalid_argument("--thresholds: " + std::to_string(t.size()) + " thresholds for " + std::to_string(n_labels) + " labels");
  return t;
}

/// The threshold of best F1 over (score, label) pairs: every distinct score is tried as "p >= t".
double best_f1_threshold(std::vector<std::pair<float, float>> rows) {
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  double positives = 0;
  for (const auto& r : rows) positives += r.second > 0.5f;
  double tp = 0, fp = 0, best_f1 = -1, best = 0.5;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    for (; j < rows.size() && rows[j].first == rows[i].first; ++j) (rows[j].second > 0.5f ? tp : fp) += 1;
    const double f1 = 2 * tp / std::max(1.0, 2 * tp + fp + (positives - tp));
    if (f1 > best_f1) {
      best_f1 = f1;
      best = rows[i].first;
    }
    i = j;
  }
  return best;
}

}  // namespace

void check_thresholds(const std::string& thresholds, std::size_t n_labels) { parse_thresholds(thresholds, n_labels); }

Decisions decisions(const std::vector<float>& probs, const std::vector<float>& labels, std::size_t n_labels, const std::vector<bool>& keep,
                    const std::string& thresholds) {
  Decisions d;
  d.threshold = parse_thresholds(thresholds, n_labels);
  const std::size_t rows = n_labels ? probs.size() / n_labels : 0;
  for (std::size_t k = 0; k < n_labels; ++k) {
    std::vector<std::pair<float, float>> column;
    for (std::size_t r = 0; r < rows; ++r)
      if (keep.empty() || keep[r]) column.emplace_back(probs[r * n_labels + k], labels[r * n_labels + k]);
    if (d.threshold.size() < n_labels) d.threshold.push_back(best_f1_threshold(column));
    double tp = 0, fp = 0, fn = 0;
    for (const auto& [p, y] : column) {
      const bool predicted = p >= d.threshold[k], positive = y > 0.5f;
      tp += predicted && positive;
      fp += predicted && !positive;
      fn += !predicted && positive;
    }
    d.precision.push_back(tp + fp > 0 ? tp / (tp + fp) : 0.0);
    d.recall.push_back(tp + fn > 0 ? tp / (tp + fn) : 0.0);
    d.f1.push_back(tp > 0 ? 2 * tp / (2 * tp + fp + fn) : 0.0);
  }
  return d;
}

void add_to(nlohmann::ordered_json& metrics, const Decisions& d, const std::vector<std::string>& label_names) {
  const auto by_label = [&](const std::vector<double>& v) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < label_names.size() && k < v.size(); ++k) j[label_names[k]] = v[k];
    return j;
  };
  metrics["thresholds"] = by_label(d.threshold);
  metrics["precision"] = by_label(d.precision);
  metrics["recall"] = by_label(d.recall);
  metrics["f1"] = by_label(d.f1);
}

namespace {
std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::max<std::size_t>(1, text::utf8_sequence_length(static_cast<unsigned char>(s[i])));
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}
}  // namespace

StringTally string_tally(const std::string& predicted, const std::string& target) {
  StringTally s;
  s.exact = predicted == target ? 1 : 0;
  const auto p = code_points(predicted), t = code_points(target);
  for (std::size_t k = 0; k < std::min(p.size(), t.size()); ++k) s.right += p[k] == t[k] ? 1 : 0;
  s.total = static_cast<double>(std::max(p.size(), t.size()));
  return s;
}

StringAccuracy string_accuracy(const std::vector<std::string>& predicted, const std::vector<std::string>& targets) {
  StringAccuracy a;
  if (predicted.empty()) return a;
  double exact = 0, right = 0, total = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    const StringTally s = string_tally(predicted[i], targets[i]);
    exact += s.exact, right += s.right, total += s.total;
  }
  a.exact_match = exact / static_cast<double>(predicted.size());
  a.char_accuracy = total > 0 ? right / total : 1.0;
  return a;
}

}  // namespace attn::metrics
