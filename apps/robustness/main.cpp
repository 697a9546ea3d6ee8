// attn robustness: a text classifier scored on a labelled file as it is and with words misspelt on
// purpose (repeated letters, leetspeak, punctuation or spaces inside, '*' masks, homoglyphs).
#include <cstdio>

#include "../common/app.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/robustness.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  std::string names;
  for (const auto& p : text::perturbations()) names += (names.empty() ? "" : ", ") + std::string(p.name) + " (" + p.example + ")";
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn robustness",
      "Score a labelled file with a text classifier as it is, then again under each perturbation of its texts\n"
      "(" + names + "),\n"
      "each made to --rate of the target words with a seeded generator (the same edits every run): per\n"
      "perturbation the metrics' drops and the share of decisions that flip (Hosseini et al. 2017).\n\n"
      "  attn robustness --model runs/hx --csv hatexplain/val.jsonl --rate 0.3 --json robustness.json\n"
      "  attn robustness --model runs/toxic --csv test.csv --words toxic_words.txt --perturbations leet,mask");
  add_model_option(options, "a text classifier");
  const auto inputs = tasks::all_inputs(tasks::Command::kRobustness);
  add_inputs(options, inputs);
  options.add_options("Perturbations")
      ("perturbations", "Comma-separated (default: every one)", cxxopts::value<std::string>()->default_value(""))
      ("rate", "Share of the target words each perturbation changes", cxxopts::value<double>()->default_value("0.3"))
      ("words", "Target only these words, one per line, any case (e.g. a toxic lexicon; default: every word of 4+ letters)",
       cxxopts::value<std::string>())
      ("seed", "The perturbations' seed", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("batch-size", "Rows per batch", cxxopts::value<std::int64_t>()->default_value(std::to_string(tasks::kScoringBatchSize)));
  options.add_options("Output")("json", "Write the figures as JSON here", cxxopts::value<std::string>());
  // clang-format on
  add_threads_option(options);
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  const int threads = threads_option(r);
  set_torch_threads(threads);
  analyses::RobustnessRequest request;
  request.model = model_option(r);
  request.options = inputs_of(r, inputs);
  request.csv = request.options.text("csv");
  for (const std::string& name : data::split_list(r["perturbations"].as<std::string>()))
    request.perturbations.push_back(text::parse_perturbation(name, "--perturbations"));
  request.rate = r["rate"].as<double>();
  request.words = given<std::string>(r, "words").value_or("");
  request.seed = r["seed"].as<std::uint64_t>();
  request.batch_size = r["batch-size"].as<std::int64_t>();
  request.threads = threads;
  request.json = given<std::string>(r, "json").value_or("");
  std::fputs(analyses::robustness(request).c_str(), stdout);
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  attn::apps::exit_now(attn::apps::guarded("attn robustness", [&] { return attn::apps::run(argc, argv); }));
}
