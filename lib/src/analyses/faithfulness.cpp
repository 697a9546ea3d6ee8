// Faithfulness metrics (see faithfulness.h): the same for every task that gives Erasures.
#include "attn/analyses/faithfulness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>

namespace attn::analyses {

using namespace tasks;  // the task interface (tasks/task.h) the analyses drive
namespace {

using models::Method;

/// Null for a mean of nothing (a tau no row defined), else the number.
nlohmann::ordered_json number_or_null(double sum, std::int64_t count) {
  return count > 0 ? nlohmann::ordered_json(sum / static_cast<double>(count)) : nlohmann::ordered_json();
}

/// Sums over rows of one method and label.
struct Sums {
  std::vector<double> comprehensiveness = std::vector<double>(kBins.size(), 0.0);
  std::vector<double> sufficiency = std::vector<double>(kBins.size(), 0.0);
  double tau = 0;
  std::int64_t tau_rows = 0;
};

/// Seeded uniform scores for row `row` (the same for every label): the random ranking.
std::vector<float> random_scores(std::uint64_t seed, std::int64_t row, std::int64_t units) {
  std::mt19937_64 generator(seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(row));
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> out(static_cast<std::size_t>(units));
  for (float& v : out) v = uniform(generator);
  return out;
}

/// A version's key: its row and its mask.
std::string key_of(const models::Version& v) {
  std::string key(reinterpret_cast<const char*>(&v.row), sizeof v.row);
  key.append(reinterpret_cast<const char*>(v.keep.data()), v.keep.size());
  return key;
}

}  // namespace

double kendall_tau_b(const std::vector<float>& a, const std::vector<float>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  // Pairs: concordant minus discordant, and the pairs tied in a and in b (a pair tied in both counts
  // in both tie counts and in neither of the others), O(n^2): rows are at most maxlen long.
  double s = 0, tied_a = 0, tied_b = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const float da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0) tied_a += 1;
      if (db == 0) tied_b += 1;
      if (da != 0 && db != 0) s += (da > 0) == (db > 0) ? 1 : -1;
    }
  const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
  const double denominator = std::sqrt((pairs - tied_a) * (pairs - tied_b));
  return denominator > 0 ? s / denominator : std::numeric_limits<double>::quiet_NaN();
}

std::vector<std::uint8_t> erasure(const std::vector<float>& scores, int k, bool keep_ranked) {
  const std::size_t n = scores.size();
  const auto top = static_cast<std::size_t>(std::ceil(static_cast<double>(k) * static_cast<double>(n) / 100.0));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return scores[i] > scores[j]; });
  std::vector<std::uint8_t> keep(n, keep_ranked ? 0 : 1);
  for (std::size_t i = 0; i < std::min(top, n); ++i) keep[order[i]] = keep_ranked ? 1 : 0;
  return keep;
}

namespace {

/// One measurement over the rows: what is attributed and measured, the running sums, and each
/// chunk's rows in turn (measure_faithfulness runs it).
class Measurement {
 public:
  Measurement(Erasures& rows, const FaithfulnessOptions& o) : rows_(rows), o_(o), labels_(rows.labels()), L_(labels_.size()) {
    // What the rows are attributed with (random is made here; leave-one-out always, for tau), and
    // what is measured (the methods asked for, then random).
    for (Method m : o.methods)
      if (m != Method::kRandom) computed_.push_back(m), measured_.push_back(m);
    if (std::find(computed_.begin(), computed_.end(), Method::kLeaveOneOut) == computed_.end()) computed_.push_back(Method::kLeaveOneOut);
    measured_.push_back(Method::kRandom);
    loo_ = static_cast<std::size_t>(std::find(computed_.begin(), computed_.end(), Method::kLeaveOneOut) - computed_.begin());
    M_ = measured_.size();
    sums_.assign(M_, std::vector<Sums>(L_));
    agree_.assign(M_, std::vector<double>(M_, 0.0));
    agree_rows_.assign(M_, std::vector<std::int64_t>(M_, 0));
  }

  /// Rows [first, first + count): attributed, their versions scored, measured and summed.
  void chunk(std::int64_t first, std::int64_t count) {
    const std::vector<AttributedRow> got = rows_.attribute(first, count, computed_, o_.steps);
    if (static_cast<std::int64_t>(got.size()) != count)
      throw std::logic_error("faithfulness: the task attributed the wrong number of rows");
    const Scores scores = scores_of(got);
    std::vector<std::size_t> wanted;  // [row][method][label][bin][comprehensiveness, sufficiency]
    const std::vector<float> p = score_versions(first, scores, wanted);
    std::size_t next = 0;
    for (std::size_t r = 0; r < got.size(); ++r) measure_row(got[r], scores.of[r], p, wanted, next);
  }

  nlohmann::ordered_json summary(std::int64_t total) const {
    nlohmann::ordered_json methods = nlohmann::ordered_json::object();
    const auto n = static_cast<double>(std::max<std::int64_t>(1, total));
    const std::size_t bins = kBins.size();
    for (std::size_t m = 0; m < M_; ++m) {
      nlohmann::ordered_json per_label = nlohmann::ordered_json::object();
      for (std::size_t l = 0; l < L_; ++l) {
        const Sums& s = sums_[m][l];
        std::vector<double> comp(bins), suff(bins);
        for (std::size_t b = 0; b < bins; ++b) comp[b] = s.comprehensiveness[b] / n, suff[b] = s.sufficiency[b] / n;
        per_label[labels_[l]] = {{"comprehensiveness", comp},
                                 {"sufficiency", suff},
                                 {"aopc_comprehensiveness", std::accumulate(comp.begin(), comp.end(), 0.0) / static_cast<double>(bins)},
                                 {"aopc_sufficiency", std::accumulate(suff.begin(), suff.end(), 0.0) / static_cast<double>(bins)},
                                 {"kendall_tau_loo", number_or_null(s.tau, s.tau_rows)}};
      }
      methods[models::method_name(measured_[m])] = per_label;
    }
    nlohmann::ordered_json agreement = nlohmann::ordered_json::object();
    for (std::size_t a = 0; a < M_; ++a) {
      nlohmann::ordered_json row = nlohmann::ordered_json::object();
      for (std::size_t b = 0; b < M_; ++b) {
        const std::size_t i = std::min(a, b), j = std::max(a, b);
        row[models::method_name(measured_[b])] = a == b ? nlohmann::ordered_json(1.0) : number_or_null(agree_[i][j], agree_rows_[i][j]);
      }
      agreement[models::method_name(measured_[a])] = row;
    }
    return {{"rows", total}, {"steps", o_.steps}, {"bins", kBins}, {"seed", o_.seed}, {"methods", methods}, {"agreement", agreement}};
  }

 private:
  /// Each row's scores by each measured method, per label: of[row][method][label] (random's in `randoms`).
  struct Scores {
    std::vector<std::vector<std::vector<const std::vector<float>*>>> of;
    std::vector<std::vector<float>> randoms;
  };

  Scores scores_of(const std::vector<AttributedRow>& got) const {
    Scores s;
    s.of.resize(got.size());
    s.randoms.resize(got.size());
    for (std::size_t r = 0; r < got.size(); ++r) s.randoms[r] = random_scores(o_.seed, got[r].row, got[r].units);
    for (std::size_t r = 0; r < got.size(); ++r)
      for (std::size_t m = 0; m < M_; ++m) {
        s.of[r].emplace_back();
        const auto c = static_cast<std::size_t>(std::find(computed_.begin(), computed_.end(), measured_[m]) - computed_.begin());
        for (std::size_t l = 0; l < L_; ++l)
          s.of[r][m].push_back(measured_[m] == Method::kRandom ? &s.randoms[r] : &got[r].scores.at(c).at(l));
      }
    return s;
  }

  /// Every version each (row, method, label, bin) needs, each distinct one scored once (the
  /// attention's and random's rankings are the same for every label; methods often agree on the
  /// top): their p, [versions x labels]; `wanted` says which version each needs.
  std::vector<float> score_versions(std::int64_t first, const Scores& scores, std::vector<std::size_t>& wanted) const {
    std::vector<models::Version> versions;
    std::unordered_map<std::string, std::size_t> known;
    for (std::size_t r = 0; r < scores.of.size(); ++r)
      for (std::size_t m = 0; m < M_; ++m)
        for (std::size_t l = 0; l < L_; ++l)
          for (int k : kBins)
            for (bool keep_ranked : {false, true}) {
              models::Version v{first + static_cast<std::int64_t>(r), erasure(*scores.of[r][m][l], k, keep_ranked)};
              const auto [it, added] = known.emplace(key_of(v), versions.size());
              if (added) versions.push_back(std::move(v));
              wanted.push_back(it->second);
            }
    const std::vector<float> p = versions.empty() ? std::vector<float>() : rows_.score(versions);
    if (p.size() != versions.size() * L_) throw std::logic_error("faithfulness: the task scored the wrong number of versions");
    return p;
  }

  /// One row's figures: added to the sums, and its per-row line.
  void measure_row(const AttributedRow& row, const std::vector<std::vector<const std::vector<float>*>>& scores, const std::vector<float>& p,
                   const std::vector<std::size_t>& wanted, std::size_t& next) {
    nlohmann::ordered_json line = {{"row", row.row}};
    if (!row.id.empty()) line["id"] = row.id;
    line["units"] = row.units;
    nlohmann::ordered_json probabilities = nlohmann::ordered_json::object();
    for (std::size_t l = 0; l < L_; ++l) probabilities[labels_[l]] = row.probabilities.at(l);
    line["probabilities"] = probabilities;
    nlohmann::ordered_json per_method = nlohmann::ordered_json::object();
    for (std::size_t m = 0; m < M_; ++m) {
      nlohmann::ordered_json per_label = nlohmann::ordered_json::object();
      for (std::size_t l = 0; l < L_; ++l) {
        std::vector<double> comp(kBins.size()), suff(kBins.size());
        for (std::size_t b = 0; b < kBins.size(); ++b) {
          comp[b] = row.probabilities[l] - p[wanted[next++] * L_ + l];
          suff[b] = row.probabilities[l] - p[wanted[next++] * L_ + l];
          sums_[m][l].comprehensiveness[b] += comp[b];
          sums_[m][l].sufficiency[b] += suff[b];
        }
        const double tau = kendall_tau_b(*scores[m][l], row.scores[loo_][l]);
        if (std::isfinite(tau)) {
          sums_[m][l].tau += tau;
          ++sums_[m][l].tau_rows;
        }
        per_label[labels_[l]] = {{"comprehensiveness", comp},
                                 {"sufficiency", suff},
                                 {"kendall_tau_loo", std::isfinite(tau) ? nlohmann::ordered_json(tau) : nlohmann::ordered_json()}};
      }
      per_method[models::method_name(measured_[m])] = per_label;
    }
    line["methods"] = per_method;
    for (std::size_t a = 0; a < M_; ++a)
      for (std::size_t b = a + 1; b < M_; ++b)
        for (std::size_t l = 0; l < L_; ++l) {
          const double tau = kendall_tau_b(*scores[a][l], *scores[b][l]);
          if (!std::isfinite(tau)) continue;
          agree_[a][b] += tau;
          ++agree_rows_[a][b];
        }
    if (o_.per_row) o_.per_row(line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }

  Erasures& rows_;
  const FaithfulnessOptions& o_;
  const std::vector<std::string> labels_;
  const std::size_t L_;
  std::vector<Method> computed_, measured_;
  std::size_t loo_ = 0, M_ = 0;
  std::vector<std::vector<Sums>> sums_;
  std::vector<std::vector<double>> agree_;
  std::vector<std::vector<std::int64_t>> agree_rows_;
};

}  // namespace

nlohmann::ordered_json measure_faithfulness(Erasures& rows, const FaithfulnessOptions& o) {
  Measurement measurement(rows, o);
  const std::int64_t total = rows.size();
  for (std::int64_t first = 0; first < total; first += o.chunk) {
    const std::int64_t count = std::min(o.chunk, total - first);
    measurement.chunk(first, count);
    if (o.progress) o.progress(first + count, total);
  }
  return measurement.summary(total);
}

namespace {

std::string fixed(const nlohmann::ordered_json& v, const char* format) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v.get<double>());
  return buf;
}

std::string cell(const std::string& s, std::size_t width, bool left = false) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string format_faithfulness(const nlohmann::ordered_json& r) {
  std::string out = "faithfulness of " + std::to_string(r.at("rows").get<std::int64_t>()) +
                    " rows (integrated gradients: " + std::to_string(r.at("steps").get<int>()) + " steps; random: seed " +
                    std::to_string(r.at("seed").get<std::uint64_t>()) +
                    ")\ncomprehensiveness: higher is better; sufficiency: lower is better (AOPC over the top 1, 5, 10, 20, 50% of "
                    "each row's tokens);\ntau_loo: Kendall tau-b with leave-one-out. Read each method against random.\n";
  const auto& methods = r.at("methods");
  std::vector<std::string> labels;
  if (!methods.empty())
    for (const auto& [label, _] : methods.begin().value().items()) labels.push_back(label);
  for (const std::string& label : labels) {
    out += "\n" + label + "\n  " + cell("method", 22, true) + cell("comprehensiveness", 18) + cell("sufficiency", 13) + cell("tau_loo", 9) +
           "\n";
    for (const auto& [method, per_label] : methods.items()) {
      const auto& m = per_label.at(label);
      out += "  " + cell(method, 22, true) + cell(fixed(m.at("aopc_comprehensiveness"), "%+.4f"), 18) +
             cell(fixed(m.at("aopc_sufficiency"), "%+.4f"), 13) + cell(fixed(m.at("kendall_tau_loo"), "%+.3f"), 9) + "\n";
    }
  }
  out += "\nagreement (mean Kendall tau-b over rows and labels)\n  " + cell("", 22, true);
  std::vector<std::string> names;
  for (const auto& [method, _] : r.at("agreement").items()) names.push_back(method);
  for (const std::string& n : names) out += cell(n.substr(0, 10), 11);
  out += "\n";
  for (const std::string& a : names) {
    out += "  " + cell(a, 22, true);
    for (const std::string& b : names) out += cell(fixed(r.at("agreement").at(a).at(b), "%+.3f"), 11);
    out += "\n";
  }
  return out;
}

}  // namespace attn::analyses
