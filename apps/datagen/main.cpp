// attn datagen: synthetic data sets in the formats the seeds use.
#include <sstream>

#include "../common/app.h"
#include "attn/data/toxic_corpus.h"
#include "attn/io/atomic_file.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  cxxopts::Options options("attn datagen",
                           "Generate a data set. KIND: toxic (a Kaggle-Jigsaw-format toxic-comment CSV whose labels\n"
                           "are learnable from words).\n\n  attn datagen toxic --rows 20000 --seed 1 --out toxic.csv");
  options.positional_help("KIND");
  options.add_options("Output")
      ("rows", "Rows to generate", cxxopts::value<std::int64_t>()->default_value("20000"))
      ("seed", "Random seed (same seed, same file)", cxxopts::value<std::uint64_t>()->default_value("1"))
      ("out", "Output CSV", cxxopts::value<std::string>())
      ("kind", "toxic", cxxopts::value<std::string>());
  options.parse_positional({"kind"});
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed) return kExitOk;
  const auto& r = *parsed;
  const auto kind = required<std::string>(r, "kind");
  const auto out = required<std::string>(r, "out");
  if (kind != "toxic") throw UsageError("unknown data set kind '" + kind + "' (kinds: toxic)");
  data::ToxicCorpusOptions o;
  o.rows = r["rows"].as<std::int64_t>();
  o.seed = r["seed"].as<std::uint64_t>();
  if (o.rows < 1) throw UsageError("--rows must be >= 1");
  std::ostringstream csv;
  data::write_toxic_corpus(csv, o);
  io::write_file_atomic(out, csv.str());
  std::printf("wrote %lld %s rows to %s\n", static_cast<long long>(o.rows), kind.c_str(), out.c_str());
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) {
  return attn::apps::guarded("attn datagen", [&] { return attn::apps::run(argc, argv); });
}
