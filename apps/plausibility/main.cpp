// attn plausibility: how far each importance method agrees with the words people marked (ERASER's
// IOU-F1, token-F1 and AUPRC), on ERASER's annotations (HateXplain) or a Toxic Spans CSV.
#include <cstdio>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/plausibility.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn plausibility",
      "Measure how far each importance method of a text model agrees with human rationales, the words people\n"
      "marked as the reason for a text's label, by ERASER's metrics: IOU-F1 (a method's top --top-k words, each\n"
      "its own span, matching a marked span at IoU >= 0.5), token-F1 (of those words) and AUPRC (of the scores).\n"
      "Rationales: ERASER's annotations (JSON Lines or a JSON array; the texts in --docs, by default docs.jsonl\n"
      "beside them) or a SemEval-2021 Toxic Spans CSV (spans, text). Definitions: docs/importance.md.\n"
      "  attn plausibility --model runs/hx --rationales hatexplain/eraser/val_split3.json --json plausibility.json\n"
      "  attn plausibility --model runs/hx --rationales tsd_trial.csv --methods attention,integrated-gradients");
  add_model_option(options);
  options.add_options("Input")
      ("rationales", "ERASER annotations (.json, .jsonl) or a Toxic Spans CSV (.csv)", cxxopts::value<std::string>())
      ("docs", "ERASER's documents (default: docs.jsonl beside --rationales)", cxxopts::value<std::string>())
      ("rows", "Only the first this many rows with a rationale (0: all)", cxxopts::value<std::int64_t>()->default_value("0"))
      ("label", "The label explained for every row (default: the row's class when the model has it, else the most probable)",
       cxxopts::value<std::string>()->default_value(""));
  add_methods_option(options, "the ones to measure (default: every one the model gives)");
  add_steps_option(options);
  options.add_options("Methods")
      ("top-k", "Words in a method's hard rationale", cxxopts::value<std::int64_t>()->default_value("5"))
      ("batch-size", "Texts explained at once", cxxopts::value<std::int64_t>()->default_value("64"));
  options.add_options("Output")
      ("json", "Write the figures, and each row's, as JSON here", cxxopts::value<std::string>());
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  keep_freed_memory(Heaps::kOne);
  analyses::PlausibilityRequest request;
  request.model = model_option(r);
  request.rationales = required<std::string>(r, "rationales");
  request.docs = given<std::string>(r, "docs").value_or("");
  request.rows = r["rows"].as<std::int64_t>();
  request.label = r["label"].as<std::string>();
  if (auto methods = methods_option(r); !methods.empty()) request.methods = std::move(methods);
  request.steps = steps_option(r);
  request.top_k = r["top-k"].as<std::int64_t>();
  request.batch_size = r["batch-size"].as<std::int64_t>();
  request.json = given<std::string>(r, "json").value_or("");
  return print(analyses::plausibility(request));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn plausibility", attn::apps::run, argc, argv); }
