#pragma once
/// The importance methods' one list: their names, as flags, JSON, tables and requests spell them,
/// and the integrated-gradients step count's default and cap. No LibTorch here, so commands and
/// requests carry methods as values. What each method computes: models/importance.h (the driver)
/// and models/attribution.h (the math).
#include <string>
#include <vector>

namespace attn::models {

enum class Method { kAttention, kGradient, kGradInput, kIntegratedGradients, kLeaveOneOut, kAttentionRollout, kRandom };

struct MethodInfo {
  Method method;
  const char* name;     ///< as flags, JSON and tables spell it
  const char* summary;  ///< one line, for --help
  /// Its scores come with the prediction's own forward pass, the same for every label (the
  /// attention, attention rollout); the others take passes of their own, per label.
  bool with_prediction = false;
};

/// Every method, in the order outputs list them.
const std::vector<MethodInfo>& all_methods();
const char* method_name(Method method);
/// MethodInfo::with_prediction of `method`.
bool with_prediction(Method method);
/// The names of `methods`, comma-separated.
std::string method_names(const std::vector<Method>& methods);
/// One name as a method; an unknown one throws std::invalid_argument naming `flag`.
Method parse_method(const std::string& name, const std::string& flag);
/// "attention,integrated-gradients" as methods (each once, in the list's order); an empty list or
/// an unknown name throws std::invalid_argument naming `flag`.
std::vector<Method> parse_method_list(const std::string& list, const std::string& flag);
/// `methods` when `available` has each (throws std::invalid_argument naming `flag` and the allowed
/// values otherwise, or for an empty list).
std::vector<Method> check_available(const std::vector<Method>& methods, const std::vector<Method>& available, const std::string& flag);

/// Integrated gradients' steps (Gauss-Legendre nodes): the default, and the most a caller may ask.
constexpr int kDefaultSteps = 50;
constexpr int kMaxSteps = 1024;

}  // namespace attn::models
