// The importance methods' one list (see methods.h).
#include "attn/models/methods.h"

#include <algorithm>
#include <stdexcept>

namespace attn::models {

const std::vector<MethodInfo>& all_methods() {
  static const std::vector<MethodInfo> methods = {
      {Method::kAttention, "attention", "the model's attention weights", true},
      {Method::kGradient, "gradient", "L2 norm of the target's gradient over the unit's embedding"},
      {Method::kGradInput, "grad-input", "gradient x (input - baseline), summed over the embedding"},
      {Method::kIntegratedGradients, "integrated-gradients", "integrated gradients from the baseline (--steps, Gauss-Legendre)"},
      {Method::kLeaveOneOut, "leave-one-out", "p(x) - p(x without the unit)"},
      {Method::kAttentionRollout, "attention-rollout", "self-attention rolled out through the layers (Abnar & Zuidema 2020)", true},
      {Method::kRandom, "random", "seeded random scores (faithfulness's floor)"},
  };
  return methods;
}

const char* method_name(Method method) {
  for (const MethodInfo& m : all_methods())
    if (m.method == method) return m.name;
  throw std::logic_error("method_name: unknown method");
}

bool with_prediction(Method method) {
  for (const MethodInfo& m : all_methods())
    if (m.method == method) return m.with_prediction;
  throw std::logic_error("with_prediction: unknown method");
}

std::string method_names(const std::vector<Method>& methods) {
  std::string out;
  for (Method m : methods) out += (out.empty() ? "" : ",") + std::string(method_name(m));
  return out;
}

Method parse_method(const std::string& name, const std::string& flag) {
  for (const MethodInfo& m : all_methods())
    if (name == m.name) return m.method;
  std::string known;
  for (const MethodInfo& m : all_methods()) known += (known.empty() ? "" : ", ") + std::string(m.name);
  throw std::invalid_argument(flag + ": unknown method '" + name + "' (methods: " + known + ")");
}

std::vector<Method> parse_method_list(const std::string& list, const std::string& flag) {
  if (list.empty()) throw std::invalid_argument(flag + ": no method given");
  std::vector<Method> out;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = list.find(',', start);
    const Method m = parse_method(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start), flag);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

std::vector<Method> check_available(const std::vector<Method>& methods, const std::vector<Method>& available, const std::string& flag) {
  const auto refuse = [&](const std::string& what) {
    throw std::invalid_argument(flag + ": " + what + " (this model gives: " + method_names(available) + ")");
  };
  if (methods.empty()) refuse("no method given");
  std::vector<Method> out;
  for (Method m : methods) {
    if (std::find(available.begin(), available.end(), m) == available.end())
      refuse("this model cannot give '" + std::string(method_name(m)) + "'");
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

}  // namespace attn::models
