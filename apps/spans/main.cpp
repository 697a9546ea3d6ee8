// attn spans: the characters of each text that make it toxic (SemEval-2021 Toxic Spans' format),
// scored by character F1 against the people's marks when the file has them.
#include <cstdio>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/spans.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn spans",
      "Mark the characters of each text that make it toxic, as SemEval-2021 Task 5 (Toxic Spans) asks: per row\n"
      "its 0-based character offsets. A span tagger (attn train --spans-column) marks the words whose probability\n"
      "is at least --threshold (0.5: the threshold it learned); a text classifier answers from its attention, the\n"
      "words weighing at least --threshold times the text's highest weight. Either way a word gives its letters, and\n"
      "two marked neighbours the gap between them. When the file has a spans column (the people's marks), prints the\n"
      "task's character F1, precision and recall. Definitions: docs/spans.md.\n"
      "  attn spans --model runs/spans --csv tsd_trial.csv --predictions spans.csv\n"
      "  attn spans --model runs/hx --csv tsd_trial.csv --threshold 0.3");
  add_model_option(options);
  options.add_options("Input")
      ("csv", "A CSV, TSV or JSON Lines file of texts", cxxopts::value<std::string>())
      ("text-column", "The column holding the text", cxxopts::value<std::string>()->default_value("text"))
      ("spans-column", "The column of the people's marks, scored against when present", cxxopts::value<std::string>()->default_value("spans"))
      ("id-column", "Ids for the predictions (default: each row's 0-based position)", cxxopts::value<std::string>()->default_value(""));
  options.add_options("Methods")
      ("threshold", "A span tagger: a word's probability; a classifier: a word's share of the text's highest attention. In (0, 1]", cxxopts::value<double>()->default_value("0.5"))
      ("batch-size", "Texts explained at once", cxxopts::value<std::int64_t>()->default_value("64"));
  options.add_options("Output")
      ("predictions", "Write id,spans per row here (SemEval's submission format)", cxxopts::value<std::string>())
      ("json", "Write the figures and each row's offsets as JSON here", cxxopts::value<std::string>());
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  keep_freed_memory(Heaps::kOne);
  analyses::SpansRequest request;
  request.model = model_option(r);
  request.csv = required<std::string>(r, "csv");
  request.text_column = r["text-column"].as<std::string>();
  request.spans_column = r["spans-column"].as<std::string>();
  request.id_column = r["id-column"].as<std::string>();
  request.threshold = r["threshold"].as<double>();
  request.batch_size = r["batch-size"].as<std::int64_t>();
  request.predictions = given<std::string>(r, "predictions").value_or("");
  request.json = given<std::string>(r, "json").value_or("");
  return print(analyses::spans(request));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn spans", attn::apps::run, argc, argv); }
