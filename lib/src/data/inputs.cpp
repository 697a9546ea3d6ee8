#include "attn/data/inputs.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace attn::data {

std::vector<InputSpec> merge_inputs(const std::vector<std::vector<InputSpec>>& lists) {
  std::vector<InputSpec> out;
  for (const auto& list : lists)
    for (const InputSpec& s : list)
      if (std::none_of(out.begin(), out.end(), [&](const InputSpec& o) { return o.name == s.name; })) out.push_back(s);
  return out;
}

void Inputs::set(const std::string& name, std::string value, Origin origin) { values_[name] = Value{std::move(value), origin}; }

bool Inputs::given(const std::string& name) const {
  const auto it = values_.find(name);
  return it != values_.end() && it->second.origin == Origin::kGiven;
}

std::optional<std::string> Inputs::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.text;
}

const std::string& Inputs::text(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw std::invalid_argument("--" + name + " is required");
  return it->second.text;
}

std::int64_t Inputs::integer(const std::string& name) const {
  const std::string& s = text(name);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE) throw std::invalid_argument("--" + name + ": '" + s + "' is not an integer");
  return v;
}

double Inputs::number(const std::string& name) const {
  const std::string& s = text(name);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) throw std::invalid_argument("--" + name + ": '" + s + "' is not a number");
  return v;
}

bool Inputs::flag(const std::string& name) const { return given(name); }

std::vector<std::string> Inputs::list(const std::string& name) const { return split_list(text(name)); }

std::vector<std::string> Inputs::given_names() const {
  std::vector<std::string> out;
  for (const auto& [name, v] : values_)
    if (v.origin == Origin::kGiven) out.push_back(name);
  return out;
}

void check_rules(const Inputs& in, const std::vector<InputRule>& rules) {
  for (const InputRule& r : rules) {
    if (!in.given(r.input)) continue;
    switch (r.kind) {
      case InputRule::Kind::kAppliesWith:
        if (!in.given(r.other)) throw std::invalid_argument("--" + r.input + " applies with --" + r.other);
        break;
      case InputRule::Kind::kOneOf:
        if (in.given(r.other)) throw std::invalid_argument("give one of --" + r.input + " and --" + r.other);
        break;
      case InputRule::Kind::kNotWith:
        if (in.given(r.other)) throw std::invalid_argument("--" + r.input + " " + r.why);
        break;
    }
  }
}

void require_declared(const Inputs& inputs, const std::vector<InputSpec>& specs, const std::string& what) {
  for (const std::string& name : inputs.given_names())
    if (std::none_of(specs.begin(), specs.end(), [&](const InputSpec& s) { return s.name == name; }))
      throw std::invalid_argument("--" + name + " does not apply to " + what);
}

InputSpec label_column_input() {
  return {"label-column",
          "The label column: text models, one class per row (softmax over the classes, see --classes); feature models, "
          "the 0/1 label (default: label)",
          ""};
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace attn::data
