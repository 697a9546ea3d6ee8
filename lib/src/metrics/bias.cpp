// Unintended identity bias: Jigsaw 2019's metric (see bias.h).
#include "attn/metrics/bias.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "attn/metrics/metrics.h"
#include "attn/report/plots.h"

namespace attn::metrics {

const std::vector<std::string>& scored_identities() {
  static const std::vector<std::string> names = {"male",  "female", "homosexual_gay_or_lesbian",    "christian", "jewish", "muslim",
                                                 "black", "white",  "psychiatric_or_mental_illness"};
  return names;
}

std::optional<double> auc_of(const std::vector<float>& scores, const std::vector<std::uint8_t>& positive,
                             const std::vector<std::uint8_t>& take) {
  std::vector<float> s, y;
  for (std::size_t r = 0; r < scores.size(); ++r)
    if (take[r]) s.push_back(scores[r]), y.push_back(positive[r] ? 1.0f : 0.0f);
  const double auc = roc_auc(s, y);  // Mann-Whitney, ties at their average rank: counted half
  if (std::isnan(auc)) return std::nullopt;
  return auc;
}

std::optional<double> power_mean(const std::vector<double>& values, double p) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (double v : values) sum += std::pow(v, p);
  return std::pow(sum / static_cast<double>(values.size()), 1.0 / p);
}

BiasFigures bias_figures(const std::vector<float>& scores, const std::vector<std::uint8_t>& positive,
                         const std::vector<std::string>& identities, const std::vector<std::vector<float>>& annotations) {
  const std::size_t n = scores.size();
  if (positive.size() != n || annotations.size() != identities.size())
    throw std::logic_error("bias_figures: scores, labels and identities differ in size");
  BiasFigures out;
  const std::optional<double> overall = auc_of(scores, positive, std::vector<std::uint8_t>(n, 1));
  if (!overall) throw std::invalid_argument("the bias metric needs positive and negative rows; these rows hold one class only");
  out.overall_auc = *overall;
  std::vector<double> subgroup, bpsn, bnsp;
  for (std::size_t i = 0; i < identities.size(); ++i) {
    if (annotations[i].size() != n) throw std::logic_error("bias_figures: an identity's annotations differ in size");
    IdentityFigures f;
    f.identity = identities[i];
    std::vector<std::uint8_t> in(n), sub(n), bp_sn(n), bn_sp(n);
    for (std::size_t r = 0; r < n; ++r) {
      in[r] = annotations[i][r] >= 0.5f;  // NaN (not annotated): not a member
      f.members += in[r];
      f.positives += in[r] && positive[r];
      sub[r] = in[r];
      bp_sn[r] = in[r] ? !positive[r] : positive[r];
      bn_sp[r] = in[r] ? positive[r] : !positive[r];
    }
    f.subgroup_auc = auc_of(scores, positive, sub);
    f.bpsn_auc = auc_of(scores, positive, bp_sn);
    f.bnsp_auc = auc_of(scores, positive, bn_sp);
    if (f.subgroup_auc) subgroup.push_back(*f.subgroup_auc);
    if (f.bpsn_auc) bpsn.push_back(*f.bpsn_auc);
    if (f.bnsp_auc) bnsp.push_back(*f.bnsp_auc);
    out.identities.push_back(std::move(f));
  }
  out.subgroup_mean = power_mean(subgroup);
  out.bpsn_mean = power_mean(bpsn);
  out.bnsp_mean = power_mean(bnsp);
  if (out.subgroup_mean && out.bpsn_mean && out.bnsp_mean)
    out.final_metric = kBiasWeight * out.overall_auc + kBiasWeight * (*out.subgroup_mean + *out.bpsn_mean + *out.bnsp_mean);
  return out;
}

std::vector<float> identity_weights(const std::vector<std::uint8_t>& positive, const std::vector<std::vector<float>>& annotations) {
  std::vector<float> w(positive.size());
  for (std::size_t r = 0; r < positive.size(); ++r) {
    bool member = false;
    for (const std::vector<float>& identity : annotations) member = member || identity.at(r) >= 0.5f;  // NaN: not a member
    w[r] = 1.0f + (member ? 1.0f : 0.0f) + (!member && positive[r] ? 1.0f : 0.0f) + (member && !positive[r] ? 1.0f : 0.0f);
  }
  return w;
}

namespace {

nlohmann::ordered_json maybe(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(); }

std::string figure(const std::optional<double>& v) {
  if (!v) return "  undef";
  char b[16];
  std::snprintf(b, sizeof b, "%7.4f", *v);
  return b;
}

/// Why the final metric is undefined ("" when it is not).
std::string undefined_reason(const BiasFigures& f) {
  if (f.final_metric) return "";
  std::string families;
  if (!f.subgroup_mean) families += " subgroup";
  if (!f.bpsn_mean) families += " BPSN";
  if (!f.bnsp_mean) families += " BNSP";
  return "no identity has a defined" + families + " AUC (a subgroup with no rows, or one class only): the final metric is undefined";
}

}  // namespace

nlohmann::ordered_json to_json(const BiasFigures& f, const std::string& label) {
  nlohmann::ordered_json ids = nlohmann::ordered_json::array();
  for (const IdentityFigures& i : f.identities)
    ids.push_back({{"identity", i.identity},
                   {"members", i.members},
                   {"positives", i.positives},
                   {"subgroup_auc", maybe(i.subgroup_auc)},
                   {"bpsn_auc", maybe(i.bpsn_auc)},
                   {"bnsp_auc", maybe(i.bnsp_auc)}});
  nlohmann::ordered_json j = {
      {"label", label},
      {"overall_auc", f.overall_auc},
      {"identities", ids},
      {"power_p", kBiasPower},
      {"power_means", {{"subgroup_auc", maybe(f.subgroup_mean)}, {"bpsn_auc", maybe(f.bpsn_mean)}, {"bnsp_auc", maybe(f.bnsp_mean)}}},
      {"final", maybe(f.final_metric)}};
  if (!f.final_metric) j["undefined"] = undefined_reason(f);
  return j;
}

std::string bias_table(const BiasFigures& f, const std::string& label) {
  std::string t = "identity bias of " + label + " (Jigsaw 2019: member = annotation >= 0.5; undef: one class only, left out)\n";
  char b[256];
  std::snprintf(b, sizeof b, "  %-32s %8s %9s %8s %8s %8s\n", "identity", "members", "positives", "subgroup", "BPSN", "BNSP");
  t += b;
  for (const IdentityFigures& i : f.identities) {
    std::snprintf(b, sizeof b, "  %-32s %8lld %9lld %8s %8s %8s\n", i.identity.c_str(), static_cast<long long>(i.members),
                  static_cast<long long>(i.positives), figure(i.subgroup_auc).c_str(), figure(i.bpsn_auc).c_str(),
                  figure(i.bnsp_auc).c_str());
    t += b;
  }
  std::snprintf(b, sizeof b, "  %-32s %8s %9s %8s %8s %8s\n", "power mean (p = -5)", "", "", figure(f.subgroup_mean).c_str(),
                figure(f.bpsn_mean).c_str(), figure(f.bnsp_mean).c_str());
  t += b;
  std::snprintf(b, sizeof b, "  overall AUC %.4f, final metric %s\n", f.overall_auc,
                f.final_metric ? figure(f.final_metric).c_str() + 1 : "undefined");
  t += b;
  if (!f.final_metric) t += "  " + undefined_reason(f) + "\n";
  return t;
}

std::string bias_heatmap_html(const BiasFigures& f, const std::string& label) {
  // Each AUC's cell shaded by how far it falls below 1 (0.5 and lower: darkest); undefined: blank.
  const auto cell = [](const std::optional<double>& v) {
    return "<td" + (v ? report::heat_style((1.0 - *v) * 2.0) : std::string()) + ">" + figure(v) + "</td>";
  };
  std::string h =
      "<p>ROC AUC per identity (Jigsaw 2019; darker: further below 1, more bias; undef: one class only, left out).</p>"
      "<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\"><tr><th>identity</th><th>members</th><th>positives</th>"
      "<th>subgroup AUC</th><th>BPSN AUC</th><th>BNSP AUC</th></tr>";
  for (const IdentityFigures& i : f.identities)
    h += "<tr><td>" + report::xml_escape(i.identity) + "</td><td>" + std::to_string(i.members) + "</td><td>" + std::to_string(i.positives) +
         "</td>" + cell(i.subgroup_auc) + cell(i.bpsn_auc) + cell(i.bnsp_auc) + "</tr>";
  h += "<tr><td>power mean (p = -5)</td><td></td><td></td>" + cell(f.subgroup_mean) + cell(f.bpsn_mean) + cell(f.bnsp_mean) +
       "</tr></table>";
  char b[128];
  std::snprintf(b, sizeof b, "<p>overall AUC %.4f, final metric %s</p>", f.overall_auc,
                f.final_metric ? figure(f.final_metric).c_str() + 1 : "undefined");
  h += b;
  if (!f.final_metric) h += "<p>" + report::xml_escape(undefined_reason(f)) + "</p>";
  return report::html_page("Identity bias of " + label, h);
}

}  // namespace attn::metrics
