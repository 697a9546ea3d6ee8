// attn explain: what a trained model attends to, per input (seed 000's get_word_importances and its kin).
#include <cstdio>

#include "../common/app.h"
#include "../common/memory.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/commands.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn explain",
      "Show what a trained model attends to, and with --methods what drives its outputs by other measures.\n"
      "Inputs come as arguments (rows of numbers after -- when one starts with '-'), one per stdin line, or\n"
      "from --csv FILE [--rows N,...]. By model:\n" +
          tasks::tasks_help(tasks::Command::kExplain) + "\n"
      "  attn explain --model runs/toxic \"ice cream\" \"ice cream sucks\"\n"
      "  attn explain --model runs/toxic --methods attention,integrated-gradients,leave-one-out \"you are an idiot\"\n"
      "  attn explain --model runs/toxic --csv test.csv --methods integrated-gradients --json > importance.jsonl\n"
      "  attn explain --model runs/features --csv features.csv --rows 1,2 --svg row-attention.svg");
  options.positional_help("TEXT...");
  add_model_option(options);
  const auto inputs = tasks::all_inputs(tasks::Command::kExplain);
  add_inputs(options, inputs);
  add_methods_option(options, "each per label (attention alone: today's output); see docs/importance.md", "attention");
  add_steps_option(options);
  options.add_options("Methods")
      ("label", "The label whose scores the text and HTML show (default: the most probable; --json has all)",
       cxxopts::value<std::string>()->default_value(""));
  options.add_options("Output")
      ("json", "One JSON object per input (JSON Lines); text models with self-attention add it per layer and head")
      ("html", "Also write a self-contained HTML page of the attention", cxxopts::value<std::string>());
  // clang-format on
  // Texts are taken as they are (cxxopts' positional lists would split them at commas).
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv, /*takes_positional=*/true);
  keep_freed_memory(Heaps::kOne);  // the importance methods' passes: batch after batch of similar tensors
  analyses::ExplainRequest request;
  request.model = model_option(r);
  request.arguments = r.unmatched();
  request.options = inputs_of(r, inputs);
  request.format = r.count("json") ? analyses::ExplainRequest::Format::kJson : analyses::ExplainRequest::Format::kText;
  request.html = given<std::string>(r, "html").value_or("");
  request.methods = methods_option(r);
  request.steps = steps_option(r);
  request.label = r["label"].as<std::string>();
  analyses::explain(request, stdin_lines, [](const std::string& s) {
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
  });
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn explain", attn::apps::run, argc, argv); }
