// attn robustness: a text classifier scored on a labelled file as it is and with words misspelt on
// purpose (repeated letters, leetspeak, punctuation or spaces inside, '*' masks, homoglyphs, invisible
// characters, dropped vowels, suffixes), in every word, in the words the model relies on, or in the
// words people marked.
#include <cstdio>
#include <cstdlib>

#include "../common/app.h"
#include "../common/options.h"
#include "../common/torch_threads.h"
#include "attn/analyses/robustness.h"

namespace attn::apps {
namespace {

std::vector<double> rates_option(const cxxopts::ParseResult& r) {
  if (r.count("rate")) {
    if (r.count("rates")) throw UsageError("give one of --rates and --rate");
    return {r["rate"].as<double>()};
  }
  std::vector<double> rates;
  for (const std::string& s : data::split_list(r["rates"].as<std::string>())) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !(v >= 0 && v <= 1)) throw UsageError("--rates: '" + s + "' is not a share in [0, 1]");
    rates.push_back(v);
  }
  if (rates.empty()) throw UsageError("--rates: give one or more shares in [0, 1]");
  return rates;
}

analyses::Targets targets_option(const std::string& name) {
  if (name == "global") return analyses::Targets::kGlobal;
  if (name == "salient") return analyses::Targets::kSalient;
  if (name == "marked") return analyses::Targets::kMarked;
  throw UsageError("--targets: '" + name + "' is not one of global, salient, marked");
}

int run(int argc, char** argv) {
  std::string names;
  for (const auto& p : text::perturbations()) names += (names.empty() ? "" : ", ") + std::string(p.name) + " (" + p.example + ")";
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn robustness",
      "Score a labelled file with a text classifier as it is, then again under each perturbation of its texts\n"
      "(" + names + "),\n"
      "each made at each of --rates to the target words with a seeded generator (the same edits every run): per\n"
      "perturbation and rate the metrics' drops and the share of decisions that flip (Hosseini et al. 2017).\n"
      "The targets: every word (--targets global, or a lexicon's: --words); the words of each row the model\n"
      "relies on most for its decision, by --salient-method (--targets salient: an attacker who reads its\n"
      "explanations; the top share of them); the words people marked in each row (--targets marked --rationales).\n\n"
      "  attn robustness --model runs/hx --csv hatexplain/val.jsonl --rates 0.1,0.3,0.5 --json robustness.json\n"
      "  attn robustness --model runs/hx --csv test.jsonl --targets salient --salient-method leave-one-out\n"
      "  attn robustness --model runs/toxic --csv test.csv --words toxic_words.txt --perturbations leet,mask");
  add_model_option(options, "a text classifier");
  const auto inputs = tasks::all_inputs(tasks::Command::kRobustness);
  add_inputs(options, inputs);
  options.add_options("Perturbations")
      ("perturbations", "Comma-separated (default: every one)", cxxopts::value<std::string>()->default_value(""))
      ("rates", "Shares of the target words each perturbation changes, comma-separated", cxxopts::value<std::string>()->default_value("0.3"))
      ("targets", "global (every word, or --words'), salient (the model's top words per row) or marked (--rationales')",
       cxxopts::value<std::string>()->default_value("global"))
      ("words", "With --targets global: only these words, one per line, any case (e.g. a toxic lexicon; default: every word of 4+ letters)",
       cxxopts::value<std::string>())
      ("salient-method", "With --targets salient: what ranks a row's words (attention, gradient, grad-input, leave-one-out, ...)",
       cxxopts::value<std::string>()->default_value("attention"))
      ("rationales", "With --targets marked: ERASER annotations (.json/.jsonl) or a Toxic Spans .csv; rows matched by their text",
       cxxopts::value<std::string>())
      ("rationale-docs", "With --rationales: ERASER's documents (default: docs.jsonl beside the annotations)", cxxopts::value<std::string>())
      ("seed", "The perturbations' seed", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("batch-size", "Rows per batch", cxxopts::value<std::int64_t>()->default_value(std::to_string(tasks::kScoringBatchSize)));
  options.add_options("Output")("json", "Write the figures as JSON here", cxxopts::value<std::string>());
  options.add_options(kHiddenGroup)("rate", "One rate (--rates' name before)", cxxopts::value<double>());
  // clang-format on
  const cxxopts::ParseResult r = parse_model_command(options, argc, argv);
  const int threads = threads_option(r);
  analyses::RobustnessRequest request;
  request.model = model_option(r);
  request.options = inputs_of(r, inputs);
  request.csv = request.options.text("csv");
  for (const std::string& name : data::split_list(r["perturbations"].as<std::string>()))
    request.perturbations.push_back(text::parse_perturbation(name, "--perturbations"));
  request.rates = rates_option(r);
  request.targets = targets_option(r["targets"].as<std::string>());
  request.words = given<std::string>(r, "words").value_or("");
  request.salient_method = models::parse_method(r["salient-method"].as<std::string>(), "--salient-method");
  request.rationales = given<std::string>(r, "rationales").value_or("");
  request.rationale_docs = given<std::string>(r, "rationale-docs").value_or("");
  request.seed = r["seed"].as<std::uint64_t>();
  request.batch_size = r["batch-size"].as<std::int64_t>();
  request.threads = threads;
  request.json = given<std::string>(r, "json").value_or("");
  return print(analyses::robustness(request));
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn robustness", attn::apps::run, argc, argv); }
