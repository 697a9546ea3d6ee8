// attn audit: a counterfactual audit of a text classifier's identity bias.
#include <cstdio>

#include "../common/app.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/audit.h"
#include "attn/text/identity_terms.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn audit",
      "Audit a text classifier for identity bias, per identity term (built in, or --terms):\n"
      "  templates  attn's template sentences filled with each term and a toxic or a kind word: the toxicity of the\n"
      "             kind ones, and Jigsaw 2019's subgroup, BPSN and BNSP AUC per term;\n"
      "  swaps      (--csv) every row of your file that mentions a term, scored again with each other term in its\n"
      "             place (\"Muslim,\" -> \"Christian,\"): the mean and largest shift, and the decisions that flip;\n"
      "  why        each term's integrated-gradients importance on its kind sentences.\n"
      "Definitions: docs/bias.md.\n\n"
      "  attn audit --model runs/toxic --html audit.html\n"
      "  attn audit --model runs/hx --benign normal --csv hatexplain/val.jsonl --json audit.json");
  add_model_option(options, "a text classifier");
  options.add_options("Input")
      ("terms", "Identity terms, one per line (default: the " + std::to_string(text::builtin_identity_terms().size()) +
       " built in)", cxxopts::value<std::string>());
  const auto inputs = tasks::all_inputs(tasks::Command::kAudit);
  add_inputs(options, inputs);
  options.add_options("Toxicity")
      ("label", "The label whose probability is the toxicity (default: the model's first)", cxxopts::value<std::string>()->default_value(""))
      ("benign", "Or, one class per row: the class whose probability's complement is (e.g. normal)",
       cxxopts::value<std::string>()->default_value(""));
  add_steps_option(options, "Audit");
  options.add_options("Audit")
      ("no-why", "Leave out the integrated gradients")
      ("examples", "Flipped rows listed (those that shift most)", cxxopts::value<std::int64_t>()->default_value("20"))
      ("batch-size", "Texts scored at once", cxxopts::value<std::int64_t>()->default_value(std::to_string(tasks::kScoringBatchSize)));
  options.add_options("Output")
      ("json", "Write the figures as JSON here", cxxopts::value<std::string>())
      ("html", "Write the report as an HTML page here", cxxopts::value<std::string>());
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  analyses::AuditRequest request;
  request.model = model_option(r);
  request.terms_file = given<std::string>(r, "terms").value_or("");
  request.options = inputs_of(r, inputs);
  request.label = r["label"].as<std::string>();
  request.benign = r["benign"].as<std::string>();
  request.steps = steps_option(r);
  request.why = !r.count("no-why");
  request.examples = r["examples"].as<std::int64_t>();
  request.batch_size = r["batch-size"].as<std::int64_t>();
  request.json = given<std::string>(r, "json").value_or("");
  request.html = given<std::string>(r, "html").value_or("");
  return print(analyses::audit(request));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn audit", attn::apps::run, argc, argv); }
