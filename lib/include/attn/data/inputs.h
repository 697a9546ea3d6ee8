#pragma once
/// Command-line inputs described as data. The library part that reads an input declares it (name,
/// help, default) and parses its value; an app only registers the declarations with its option
/// parser and hands the values back. So `attn train` takes the inputs of every task and gives the
/// model's task the ones that were set, with no branch on the task in the app.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn::data {

/// One input, `--NAME VALUE` or the flag `--NAME`.
struct InputSpec {
  enum class Kind { kValue, kFlag };
  std::string name;  ///< without the dashes, e.g. "text-column"
  std::string help;
  std::string default_value;  ///< empty: no default
  Kind kind = Kind::kValue;
  std::string group = "Input";  ///< the group --help lists it under
};

/// `lists` concatenated, each name once (the first declaration wins).
std::vector<InputSpec> merge_inputs(const std::vector<std::vector<InputSpec>>& lists);

/// The values of inputs, given on the command line or defaulted. Every accessor that parses throws
/// std::invalid_argument naming --NAME (a bad setting).
class Inputs {
 public:
  enum class Origin { kGiven, kDefault };
  void set(const std::string& name, std::string value, Origin origin);

  bool given(const std::string& name) const;
  /// The value, given or defaulted; nullopt when neither.
  std::optional<std::string> get(const std::string& name) const;
  /// The value; "--NAME is required" when there is none.
  const std::string& text(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  /// A finite number ("--NAME: 'x' is not a number" otherwise).
  double number(const std::string& name) const;
  bool flag(const std::string& name) const;
  /// A comma-separated value as a list ("" -> empty).
  std::vector<std::string> list(const std::string& name) const;
  /// The names that were given, in name order.
  std::vector<std::string> given_names() const;

 private:
  struct Value {
    std::string text;
    Origin origin;
  };
  std::map<std::string, Value> values_;
};

/// Throws std::invalid_argument for the first given input that `specs` do not declare:
/// "--NAME does not apply to WHAT".
void require_declared(const Inputs& inputs, const std::vector<InputSpec>& specs, const std::string& what);

/// --label-column, as every task that reads one declares it (the same declaration, so `attn train`
/// can take every task's inputs): no default, each task supplies its own.
InputSpec label_column_input();

/// Splits "a,b,c" (empty string -> empty list).
std::vector<std::string> split_list(const std::string& s);

}  // namespace attn::data
