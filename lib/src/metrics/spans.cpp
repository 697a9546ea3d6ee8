// SemEval-2021 Task 5's character F1 (see spans.h).
#include "attn/metrics/spans.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

namespace attn::metrics {
namespace {

std::vector<std::int64_t> as_set(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

/// One post's precision, recall and F1.
SpanScores post_scores(const std::vector<std::int64_t>& predicted, const std::vector<std::int64_t>& gold) {
  const std::vector<std::int64_t> p = as_set(predicted), g = as_set(gold);
  SpanScores s;
  s.posts = 1;
  if (p.empty() || g.empty()) {
    s.f1 = s.precision = s.recall = p.empty() && g.empty() ? 1.0 : 0.0;
    return s;
  }
  std::vector<std::int64_t> both;
  std::set_intersection(p.begin(), p.end(), g.begin(), g.end(), std::back_inserter(both));
  const auto common = static_cast<double>(both.size());
  s.precision = common / static_cast<double>(p.size());
  s.recall = common / static_cast<double>(g.size());
  s.f1 = 2 * common / static_cast<double>(p.size() + g.size());
  return s;
}

}  // namespace

double span_f1(const std::vector<std::int64_t>& predicted, const std::vector<std::int64_t>& gold) {
  return post_scores(predicted, gold).f1;
}

SpanScores span_scores(const std::vector<std::vector<std::int64_t>>& predicted, const std::vector<std::vector<std::int64_t>>& gold) {
  if (predicted.size() != gold.size())
    throw std::invalid_argument("spans: " + std::to_string(predicted.size()) + " predicted posts for " + std::to_string(gold.size()) +
                                " marked ones");
  SpanScores out;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    const SpanScores s = post_scores(predicted[i], gold[i]);
    out.f1 += s.f1;
    out.precision += s.precision;
    out.recall += s.recall;
  }
  out.posts = static_cast<std::int64_t>(gold.size());
  if (out.posts > 0) {
    const auto n = static_cast<double>(out.posts);
    out.f1 /= n;
    out.precision /= n;
    out.recall /= n;
  }
  return out;
}

}  // namespace attn::metrics
