#pragma once
/// What every `attn` app shares: exit codes, error reporting, the --threads option, and the
/// bridge from the library's input declarations (data::InputSpec) to cxxopts.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "attn/data/inputs.h"

namespace attn::apps {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        ///< bad input file, I/O error, anything at run time
inline constexpr int kExitUsage = 2;          ///< bad flag, flag value or setting
inline constexpr int kExitInterrupted = 130;  ///< stopped by Ctrl-C or SIGTERM (attn train: checkpoint saved)

/// A bad flag or flag value (exit code 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Runs `body` and turns exceptions into a one-line "attn CMD: error: ..." on stderr and an exit
/// code: UsageError, cxxopts' errors and std::invalid_argument (a bad setting) give 2, everything
/// else 1.
int guarded(const std::string& command, const std::function<int()>& body);

/// Ends the process with `code` once standard output and error are flushed, without running static
/// destructors: every file a command writes is complete before it returns (io::write_file_atomic),
/// and LibTorch's teardown (unregistering thousands of operators) is 40-60 ms of nothing at the
/// end of every command. Sanitizer builds exit normally (LeakSanitizer reports at exit).
[[noreturn]] void exit_now(int code);

/// An app's whole main: `run(argc, argv)` under guarded(command, ...), then exit_now with its code.
[[noreturn]] void run_app(const std::string& command, int (*run)(int, char**), int argc, char** argv);

/// Prints a command's report to standard output; returns kExitOk, a command's code once it printed.
int print(const std::string& report);

/// The options group --help leaves out: old names still read (options.h's --method).
inline constexpr const char* kHiddenGroup = "Hidden";

/// Thrown once --help's text is printed: guarded() ends the command there with kExitOk.
struct HelpShown {};

/// Parses argv (with --help added). --help prints the options and throws HelpShown. Unknown flags
/// and stray positional arguments (unless the command takes them) are usage errors.
cxxopts::ParseResult parse_options(cxxopts::Options& options, int argc, char** argv, bool takes_positional = false);

/// Value of a required option, or a UsageError naming it.
template <class T>
T required(const cxxopts::ParseResult& r, const std::string& name) {
  if (!r.count(name)) throw UsageError("--" + name + " is required");
  return r[name].as<T>();
}
/// Value of an option if given.
template <class T>
std::optional<T> given(const cxxopts::ParseResult& r, const std::string& name) {
  return r.count(name) ? std::optional<T>(r[name].as<T>()) : std::nullopt;
}

/// Registers the library's input declarations as options.
void add_inputs(cxxopts::Options& options, const std::vector<data::InputSpec>& specs);
/// Their values: the given ones, then the defaults.
data::Inputs inputs_of(const cxxopts::ParseResult& r, const std::vector<data::InputSpec>& specs);

/// --threads N (default: all cores); threads_option() validates it.
void add_threads_option(cxxopts::Options& options);
int threads_option(const cxxopts::ParseResult& r);

/// The lines of standard input (only the '\n' is stripped).
std::vector<std::string> stdin_lines();

}  // namespace attn::apps
