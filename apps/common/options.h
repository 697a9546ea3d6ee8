#pragma once
/// The options several commands share, each declared once here: the model a command reads, the
/// importance methods and integrated gradients' steps, and the data-parallel workers. A command adds
/// the ones it takes and reads each back with its *_option function. A new shared option goes here
/// (docs/architecture.md); an option one command alone takes stays in its main.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "attn/models/methods.h"

namespace attn::apps {

/// --model: a run directory or model.pt; `kind` narrows what it must be ("a text classifier").
void add_model_option(cxxopts::Options& options, const std::string& kind = "");
/// Its value; a usage error when it is missing.
std::string model_option(const cxxopts::ParseResult& r);

/// --methods M[,M...] (in the "Methods" group): `about` says what they are for and what the default
/// does. --method, explain's name for it before, is read the same.
void add_methods_option(cxxopts::Options& options, const std::string& about, const std::string& default_value = "");
/// The methods given (by either name), or the default; none for an empty list (the command's own default).
std::vector<models::Method> methods_option(const cxxopts::ParseResult& r);

/// --steps: integrated gradients' steps, Gauss-Legendre nodes (models::kDefaultSteps unless given).
void add_steps_option(cxxopts::Options& options, const std::string& group = "Methods");
int steps_option(const cxxopts::ParseResult& r);

/// --nproc N and --worker-timeout S (the "Distributed" group); `what` is what the workers do ("Train").
void add_distributed_options(cxxopts::Options& options, const std::string& what);
/// --nproc when given (the command then forks its workers: common/launcher.h).
std::optional<int> nproc_option(const cxxopts::ParseResult& r);
std::chrono::seconds worker_timeout_option(const cxxopts::ParseResult& r);

}  // namespace attn::apps
