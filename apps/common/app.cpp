#include "app.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace attn::apps {

int guarded(const std::string& command, const std::function<int()>& body) {
  // Over a file-size limit (ulimit -f) a write fails with EFBIG and the command says so, instead of
  // the process dying of SIGXFSZ; the files it replaces stay as they were.
  std::signal(SIGXFSZ, SIG_IGN);
  const auto usage = [&](const char* what) {
    std::cerr << command << ": error: " << what << " (see '" << command << " --help')\n";
    return kExitUsage;
  };
  try {
    return body();
  } catch (const HelpShown&) {
    return kExitOk;
  } catch (const UsageError& e) {
    return usage(e.what());
  } catch (const cxxopts::exceptions::exception& e) {
    return usage(e.what());
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  } catch (const std::exception& e) {
    std::cerr << command << ": error: " << e.what() << "\n";
    return kExitFailure;
  }
}

void exit_now(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  std::exit(code);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
  std::exit(code);
#endif
#endif
  std::_Exit(code);
}

void run_app(const std::string& command, int (*run)(int, char**), int argc, char** argv) {
  exit_now(guarded(command, [&] { return run(argc, argv); }));
}

int print(const std::string& report) {
  std::fputs(report.c_str(), stdout);
  return kExitOk;
}

cxxopts::ParseResult parse_options(cxxopts::Options& options, int argc, char** argv, bool takes_positional) {
  options.add_options("Help")("h,help", "Show this help");
  auto result = options.parse(argc, argv);
  if (result.count("help")) {
    // Groups in a fixed, task-first order (cxxopts would sort them by name).
    std::vector<std::string> order;
    for (const char* g : {"Input", "Model", "Training", "Methods", "Output", "Tokenizer (Keras Tokenizer arguments)",
                          "Padding (Keras pad_sequences arguments)", "Compute", "Help"})
      for (const std::string& have : options.groups())
        if (have == g) order.push_back(have);
    for (const std::string& have : options.groups())
      if (have != kHiddenGroup && std::find(order.begin(), order.end(), have) == order.end()) order.push_back(have);
    std::cout << options.help(order) << std::flush;
    throw HelpShown{};
  }
  if (!takes_positional && !result.unmatched().empty()) throw UsageError("unexpected argument '" + result.unmatched().front() + "'");
  return result;
}

void add_inputs(cxxopts::Options& options, const std::vector<data::InputSpec>& specs) {
  for (const data::InputSpec& s : specs) {
    if (s.kind == data::InputSpec::Kind::kFlag) {
      options.add_options(s.group)(s.name, s.help);
    } else {
      auto value = cxxopts::value<std::string>();
      if (!s.default_value.empty()) value->default_value(s.default_value);
      options.add_options(s.group)(s.name, s.help, value);
    }
  }
}

data::Inputs inputs_of(const cxxopts::ParseResult& r, const std::vector<data::InputSpec>& specs) {
  data::Inputs in;
  for (const data::InputSpec& s : specs) {
    if (r.count(s.name))
      in.set(s.name, s.kind == data::InputSpec::Kind::kFlag ? "true" : r[s.name].as<std::string>(), data::Inputs::Origin::kGiven);
    else if (!s.default_value.empty())
      in.set(s.name, s.default_value, data::Inputs::Origin::kDefault);
  }
  return in;
}

void add_threads_option(cxxopts::Options& options) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  options.add_options("Compute")("threads", "Threads to use (defaults to the number of cores, shared by a machine's data-parallel workers)",
                                 cxxopts::value<int>()->default_value(std::to_string(cores)));
}

int threads_option(const cxxopts::ParseResult& r) {
  int n = r["threads"].as<int>();
  // A worker of a data-parallel run (torchrun, attn train --nproc): the cores shared by this machine's workers.
  const char* local_workers = std::getenv("LOCAL_WORLD_SIZE");
  if (!r.count("threads") && local_workers && std::atoi(local_workers) > 1) n = std::max(1, n / std::atoi(local_workers));
  if (n < 1) throw UsageError("--threads must be >= 1, got " + std::to_string(n));
  return n;
}

std::vector<std::string> stdin_lines() {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(std::cin, line)) lines.push_back(line);
  return lines;
}

}  // namespace attn::apps
