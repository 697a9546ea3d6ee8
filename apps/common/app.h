#pragma once
/// What every `attn` subcommand shares: exit codes, error reporting, and the option groups that
/// several commands take (threads, tokenizer settings, padding).
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include <cxxopts.hpp>

#include "attn/data/prepare.h"
#include "attn/text/padding.h"
#include "attn/text/tokenizer.h"

namespace attn::apps {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  ///< bad input file, I/O error, anything at run time
inline constexpr int kExitUsage = 2;    ///< bad flag or flag value

/// A bad flag or flag value (exit code 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One subcommand of `attn`: `run` gets argv with argv[0] = "attn NAME".
struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

/// Runs `body` and turns exceptions into a one-line "attn CMD: error: ..." on stderr and an exit
/// code: UsageError and cxxopts' errors give 2, everything else 1.
int guarded(const std::string& command, const std::function<int()>& body);

/// Parses argv; prints help and returns nullopt for --help. Unknown flags and stray positional
/// arguments (unless the command takes them) are usage errors.
std::optional<cxxopts::ParseResult> parse_or_help(cxxopts::Options& options, int argc, char** argv,
                                                   bool takes_positional = false);

/// Value of a required option, or a UsageError naming it.
template <class T>
T required(const cxxopts::ParseResult& r, const std::string& name) {
  if (!r.count(name)) throw UsageError("--" + name + " is required");
  return r[name].as<T>();
}

// ---- Option groups ----

/// Number of hardware threads (at least 1).
int hardware_threads();
/// --threads N (default: all cores). threads_option() validates it; apps using LibTorch pass it to
/// attn::io::set_torch_threads (LibTorch's own default is 1 thread on some machines).
void add_threads_option(cxxopts::Options& options);
int threads_option(const cxxopts::ParseResult& r);

/// Keras Tokenizer settings: --num-words, --oov-token, --no-lower, --char-level, --filters, --split.
void add_tokenizer_options(cxxopts::Options& options);
text::TokenizerOptions tokenizer_options(const cxxopts::ParseResult& r);
/// True when any tokenizer setting was given on the command line.
bool any_tokenizer_option(const cxxopts::ParseResult& r);

/// pad_sequences settings: --maxlen, --padding, --truncating. `default_maxlen` empty: no default
/// (no padding unless --maxlen is given).
void add_padding_options(cxxopts::Options& options, const std::string& default_maxlen);
/// Padding settings; maxlen is unset when there is neither a default nor --maxlen.
text::PadOptions padding_options(const cxxopts::ParseResult& r);

/// Everything that turns a CSV into prepared data (attn prepare, attn train --csv): --csv,
/// --text-column, --labels, --id-column, --tokenizer, the tokenizer group and the padding group.
void add_prepare_options(cxxopts::Options& options);
data::PrepareOptions prepare_options(const cxxopts::ParseResult& r, const std::string& csv, int threads);

/// Splits "a,b,c" (empty string -> empty list).
std::vector<std::string> split_list(const std::string& s);

}  // namespace attn::apps
