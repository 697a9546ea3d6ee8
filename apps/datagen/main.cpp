// attn datagen: synthetic data sets in the formats the seeds use.
#include <cstdio>

#include "../common/app.h"
#include "attn/data/synthetic.h"
#include "attn/io/atomic_file.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options(
      "attn datagen",
      "Generate a data set. KIND:\n"
      "  toxic     a Kaggle-Jigsaw-format toxic-comment CSV whose labels are learnable from words (seed 000)\n"
      "  civil     Civil Comments in Jigsaw 2019's layout: shares of raters, identity columns, a planted identity bias\n"
      "  documents e-mail-like documents whose labels one sentence carries, with its number (hierarchical models)\n"
      "  spans     posts in SemEval-2021 Toxic Spans' layout: the characters of each insult or threat marked (span taggers)\n"
      "  features  numeric features x0.. and a 0/1 label carried by the --informative ones (seed 001)\n"
      "  dates     human-readable dates in many formats and random case -> ISO dates (seed 002)\n\n"
      "  attn datagen toxic --rows 20000 --seed 1 --out toxic.csv\n"
      "  attn datagen civil --rows 20000 --seed 1 --out civil.csv\n"
      "  attn datagen documents --rows 5000 --seed 1 --out documents.csv\n"
      "  attn datagen spans --rows 5000 --seed 1 --out spans.csv\n"
      "  attn datagen features --rows 100000 --dims 10 --informative 1,2 --seed 1 --out features.csv\n"
      "  attn datagen dates --rows 20000 --seed 1 --locales en_US --out dates.csv");
  options.positional_help("KIND");
  options.add_options("Output")
      ("rows", "Rows to generate", cxxopts::value<std::int64_t>()->default_value("20000"))
      ("seed", "Random seed (same seed, same file)", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("out", "Output CSV", cxxopts::value<std::string>())
      ("kind", "toxic, civil, documents, spans, features or dates", cxxopts::value<std::string>());
  options.add_options("Features")
      ("dims", "Number of features", cxxopts::value<std::int64_t>()->default_value("10"))
      ("informative", "0-based indices of the features that carry the label", cxxopts::value<std::string>()->default_value("1,2"))
      ("accuracy", "Best achievable accuracy (label noise)", cxxopts::value<double>()->default_value("0.92"));
  options.add_options("Dates")
      ("locales", "ICU locales to render dates in, picked at random per row", cxxopts::value<std::string>()->default_value("en_US"))
      ("from-year", "First year", cxxopts::value<int>()->default_value("1950"))
      ("to-year", "Last year", cxxopts::value<int>()->default_value("2049"));
  // clang-format on
  options.parse_positional({"kind"});
  const cxxopts::ParseResult r = parse_options(options, argc, argv);
  const data::GenerateRequest request{required<std::string>(r, "kind"), r["rows"].as<std::int64_t>(),       r["seed"].as<std::uint64_t>(),
                                      r["dims"].as<std::int64_t>(),     r["informative"].as<std::string>(), r["accuracy"].as<double>(),
                                      r["locales"].as<std::string>(),   r["from-year"].as<int>(),           r["to-year"].as<int>()};
  const auto out = required<std::string>(r, "out");
  io::write_file_atomic(out, data::generate(request));
  std::printf("wrote %lld %s rows to %s\n", static_cast<long long>(request.rows), request.kind.c_str(), out.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn datagen", attn::apps::run, argc, argv); }
