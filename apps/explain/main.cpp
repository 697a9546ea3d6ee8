// attn explain: what a trained model attends to, per input (seed 000's get_word_importances and its kin).
#include <cstdio>

#include "../common/app.h"
#include "attn/io/threads.h"
#include "attn/tasks/commands.h"
#include "attn/tasks/task.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  cxxopts::Options options(
      "attn explain",
      "Show what a trained model attends to. Text classifiers: label probabilities and every word's weight.\n"
      "feature-attention: the probability and every feature's weight for rows given as VALUE,VALUE,... (after\n"
      "-- when one starts with '-') or --csv FILE --rows N,... seq2seq-attention: the output and its attention\n"
      "matrix (output x input). Texts come as arguments, or one per stdin line.\n\n"
      "  attn explain --model runs/toxic \"ice cream\" \"ice cream sucks\"\n"
      "  attn explain --model runs/features --csv features.csv --rows 1,2 --svg row-attention.svg\n"
      "  attn explain --model runs/features -- -0.5,1.2,0.8,0,0,0,0,0,0,0\n"
      "  attn explain --model runs/dates \"saturday 9 may 1998\" --svg dates.svg");
  options.positional_help("TEXT...");
  options.add_options("Input")("model", "Run directory or model.pt", cxxopts::value<std::string>());
  const auto inputs = tasks::all_inputs(tasks::Command::kExplain);
  add_inputs(options, inputs);
  options.add_options("Output")
      ("json", "One JSON object per input (JSON Lines); text models with self-attention add it per layer and head")
      ("html", "Also write a self-contained HTML page of the attention", cxxopts::value<std::string>());
  add_threads_option(options);
  // Texts are taken as they are (cxxopts' positional lists would split them at commas).
  const auto parsed = parse_or_help(options, argc, argv, /*takes_positional=*/true);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  io::set_torch_threads(threads_option(r));
  const tasks::ExplainRequest request{required<std::string>(r, "model"), r.unmatched(), inputs_of(r, inputs),
                                      r.count("json") ? tasks::ExplainRequest::Format::kJson : tasks::ExplainRequest::Format::kText,
                                      given<std::string>(r, "html").value_or("")};
  std::fputs(tasks::explain(request, stdin_lines).c_str(), stdout);
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  attn::apps::exit_now(attn::apps::guarded("attn explain", [&] { return attn::apps::run(argc, argv); }));
}
