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
#include <type_traits>
#include <variant>
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

/// A typed input's value: given on the command line, else its default (else T's), and whether it was given.
template <class T>
struct Given {
  T value{};
  bool given = false;
  std::string text;  ///< the value as written (for messages)
};

/// One input of a typed struct S: its declaration and the member it fills. A table of these
/// declares a command's inputs (specs_of) and reads them (read_fields) in one place, so no input
/// is looked up by name anywhere else.
template <class S>
struct Field {
  InputSpec spec;
  std::variant<Given<std::string> S::*, Given<std::int64_t> S::*, Given<double> S::*, Given<bool> S::*,
               Given<std::vector<std::string>> S::*>
      into;
};

/// The declarations of `fields`, in order.
template <class S>
std::vector<InputSpec> specs_of(const std::vector<Field<S>>& fields) {
  std::vector<InputSpec> out;
  for (const Field<S>& f : fields) out.push_back(f.spec);
  return out;
}

/// Fills `s`'s members from `in` as `fields` say: a flag is whether it was given; a value is parsed
/// as its member's type (a string, an integer, a finite number, a comma-separated list), errors
/// naming --NAME; a member whose input has no value keeps what `s` holds.
template <class S>
S read_fields(const Inputs& in, const std::vector<Field<S>>& fields, S s = {});

/// A rule between two inputs, checked on what was given (check_rules).
struct InputRule {
  enum class Kind {
    kAppliesWith,  ///< `input` only with `other`: "--INPUT applies with --OTHER"
    kOneOf,        ///< not both: "give one of --INPUT and --OTHER"
    kNotWith,      ///< not with `other`: "--INPUT " + why
  };
  Kind kind;
  std::string input, other;
  std::string why;  ///< kNotWith's reason
};

/// Throws std::invalid_argument with the message of the first rule `in` breaks.
void check_rules(const Inputs& in, const std::vector<InputRule>& rules);

/// --label-column, as every task that reads one declares it (the same declaration, so `attn train`
/// can take every task's inputs): no default, each task supplies its own.
InputSpec label_column_input();

/// Splits "a,b,c" (empty string -> empty list).
std::vector<std::string> split_list(const std::string& s);

template <class S>
S read_fields(const Inputs& in, const std::vector<Field<S>>& fields, S s) {
  for (const Field<S>& f : fields) {
    const std::string& name = f.spec.name;
    const bool given = in.given(name), has_value = in.get(name).has_value();
    std::visit(
        [&](auto member) {
          auto& field = s.*member;
          using T = decltype(field.value);
          field.given = given;
          if (has_value) field.text = in.text(name);
          if constexpr (std::is_same_v<T, bool>) {
            field.value = given;
          } else if (has_value) {
            if constexpr (std::is_same_v<T, std::string>) field.value = in.text(name);
            if constexpr (std::is_same_v<T, std::int64_t>) field.value = in.integer(name);
            if constexpr (std::is_same_v<T, double>) field.value = in.number(name);
            if constexpr (std::is_same_v<T, std::vector<std::string>>) field.value = in.list(name);
          }
        },
        f.into);
  }
  return s;
}

}  // namespace attn::data
