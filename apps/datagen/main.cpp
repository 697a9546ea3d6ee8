// attn datagen: synthetic data sets in the formats the seeds use.
#include <sstream>

#include "../common/app.h"
#include "attn/data/synthetic.h"
#include "attn/data/toxic_corpus.h"
#include "attn/io/atomic_file.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  cxxopts::Options options(
      "attn datagen",
      "Generate a data set. KIND:\n"
      "  toxic     a Kaggle-Jigsaw-format toxic-comment CSV whose labels are learnable from words (seed 000)\n"
      "  features  numeric features x0.. and a 0/1 label carried by the --informative ones (seed 001)\n"
      "  dates     human-readable dates in many formats and random case -> ISO dates (seed 002)\n\n"
      "  attn datagen toxic --rows 20000 --seed 1 --out toxic.csv\n"
      "  attn datagen features --rows 100000 --dims 10 --informative 1,2 --seed 1 --out features.csv\n"
      "  attn datagen dates --rows 20000 --seed 1 --locales en_US --out dates.csv");
  options.positional_help("KIND");
  options.add_options("Output")
      ("rows", "Rows to generate", cxxopts::value<std::int64_t>()->default_value("20000"))
      ("seed", "Random seed (same seed, same file)", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("out", "Output CSV", cxxopts::value<std::string>())
      ("kind", "toxic, features or dates", cxxopts::value<std::string>());
  options.add_options("Features")
      ("dims", "Number of features", cxxopts::value<std::int64_t>()->default_value("10"))
      ("informative", "0-based indices of the features that carry the label", cxxopts::value<std::string>()->default_value("1,2"))
      ("accuracy", "Best achievable accuracy (label noise)", cxxopts::value<double>()->default_value("0.92"));
  options.add_options("Dates")
      ("locales", "ICU locales to render dates in, picked at random per row", cxxopts::value<std::string>()->default_value("en_US"))
      ("from-year", "First year", cxxopts::value<int>()->default_value("1950"))
      ("to-year", "Last year", cxxopts::value<int>()->default_value("2049"));
  options.parse_positional({"kind"});
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  const auto kind = required<std::string>(r, "kind");
  const auto out = required<std::string>(r, "out");
  const std::int64_t rows = r["rows"].as<std::int64_t>();
  const std::uint64_t seed = r["seed"].as<std::uint64_t>();
  if (rows < 1) throw UsageError("--rows must be >= 1");
  std::ostringstream csv;
  try {
    if (kind == "toxic") {
      data::ToxicCorpusOptions o;
      o.rows = rows;
      o.seed = seed;
      data::write_toxic_corpus(csv, o);
    } else if (kind == "features") {
      data::FeatureCorpusOptions o;
      o.rows = rows;
      o.seed = seed;
      o.dims = r["dims"].as<std::int64_t>();
      o.bayes_accuracy = r["accuracy"].as<double>();
      o.informative.clear();
      for (const std::string& s : split_list(r["informative"].as<std::string>())) {
        std::size_t used = 0;
        long long v = -1;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
        }
        if (used != s.size() || v < 0) throw UsageError("--informative: '" + s + "' is not a feature index");
        o.informative.push_back(v);
      }
      data::write_feature_corpus(csv, o);
    } else if (kind == "dates") {
      data::DateCorpusOptions o;
      o.rows = rows;
      o.seed = seed;
      o.locales = split_list(r["locales"].as<std::string>());
      o.from_year = r["from-year"].as<int>();
      o.to_year = r["to-year"].as<int>();
      data::write_date_corpus(csv, o);
    } else {
      throw UsageError("unknown data set kind '" + kind + "' (kinds: toxic, features, dates)");
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  io::write_file_atomic(out, csv.str());
  std::printf("wrote %lld %s rows to %s\n", static_cast<long long>(rows), kind.c_str(), out.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn datagen", [&] { return attn::apps::run(argc, argv); });
}
