#include "options.h"

#include "app.h"
#include "attn/tasks/command.h"

namespace attn::apps {

void add_model_option(cxxopts::Options& options, const std::string& kind) {
  options.add_options("Input")("model", "Run directory or model.pt" + (kind.empty() ? "" : " (" + kind + ")"),
                               cxxopts::value<std::string>());
}

std::string model_option(const cxxopts::ParseResult& r) { return required<std::string>(r, "model"); }

void add_methods_option(cxxopts::Options& options, const std::string& about, const std::string& default_value) {
  std::string names;
  for (const std::string& m : tasks::method_names()) names += (names.empty() ? "" : ", ") + m;
  options.add_options("Methods")("methods", "Importance methods, comma-separated (" + names + "): " + about,
                                 cxxopts::value<std::string>()->default_value(default_value));
  options.add_options(kHiddenGroup)("method", "", cxxopts::value<std::string>());
}

std::vector<models::Method> methods_option(const cxxopts::ParseResult& r) {
  if (r.count("method") && r.count("methods")) throw UsageError("--method is --methods' old name: give one of them");
  const char* flag = r.count("method") ? "method" : "methods";  // the default is --methods'
  const std::string list = r[flag].as<std::string>();
  return list.empty() ? std::vector<models::Method>{} : models::parse_method_list(list, std::string("--") + flag);
}

void add_steps_option(cxxopts::Options& options, const std::string& group) {
  options.add_options(group)("steps", "Integrated gradients' steps (Gauss-Legendre nodes), 1.." + std::to_string(models::kMaxSteps),
                             cxxopts::value<int>()->default_value(std::to_string(models::kDefaultSteps)));
}

int steps_option(const cxxopts::ParseResult& r) { return r["steps"].as<int>(); }

void add_distributed_options(cxxopts::Options& options, const std::string& what) {
  options.add_options("Distributed")(
      "nproc", what + " as N data-parallel local workers (c10d/Gloo), as torchrun --nproc_per_node N would (docs/distributed.md)",
      cxxopts::value<int>())("worker-timeout", "Seconds a worker waits for the others before failing",
                             cxxopts::value<int>()->default_value("300"));
}

std::optional<int> nproc_option(const cxxopts::ParseResult& r) { return given<int>(r, "nproc"); }

std::chrono::seconds worker_timeout_option(const cxxopts::ParseResult& r) { return std::chrono::seconds(r["worker-timeout"].as<int>()); }

}  // namespace attn::apps
