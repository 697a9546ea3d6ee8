// attn embed: word vectors (skip-gram, with fastText's subwords) learnt from any text.
#include <cstdio>

#include "../common/app.h"
#include "attn/data/skipgram.h"
#include "attn/text/subwords.h"

namespace attn::apps {
namespace {

int run(int argc, char** argv) {
  // (the option tables read best as written)
  // clang-format off
  cxxopts::Options options("attn embed",
                           "Learn word vectors from unlabelled text: skip-gram with negative sampling, each word also its\n"
                           "character n-grams (fastText's subwords, the hash --subwords uses). Words are split as the Keras\n"
                           "tokenizer splits them. Writes OUT (word2vec text format, for --embeddings) and, with subwords,\n"
                           "OUT.subwords (a model with --subwords starts from its rows).");
  options.add_options("Input")
      ("csv", "A CSV, TSV or JSON Lines file: its text column", cxxopts::value<std::string>())
      ("text-column", "The column holding the text", cxxopts::value<std::string>()->default_value("comment_text"))
      ("format", "csv, tsv, jsonl or auto (by the extension)", cxxopts::value<std::string>()->default_value("auto"))
      ("txt", "A plain text file instead: one text per line", cxxopts::value<std::string>())
      ("out", "The vectors file to write (.vec)", cxxopts::value<std::string>());
  options.add_options("Model")
      ("dim", "Vector size (the model's embed_dim or d_model)", cxxopts::value<std::int64_t>()->default_value("100"))
      ("epochs", "Passes over the texts", cxxopts::value<std::int64_t>()->default_value("5"))
      ("window", "Context words on each side, at most", cxxopts::value<std::int64_t>()->default_value("5"))
      ("negatives", "Negative words per context word", cxxopts::value<std::int64_t>()->default_value("5"))
      ("min-count", "Words seen fewer times are left out", cxxopts::value<std::int64_t>()->default_value("5"))
      ("buckets", "Character n-gram rows (0: whole words only)",
       cxxopts::value<std::int64_t>()->default_value(std::to_string(text::kDefaultSubwordBuckets)))
      ("lr", "First step size (decays linearly to 0)", cxxopts::value<double>()->default_value("0.05"))
      ("sample", "Subsampling threshold of frequent words", cxxopts::value<double>()->default_value("0.0001"))
      ("seed", "Random seed (the same vectors on every run with --threads 1)", cxxopts::value<std::uint64_t>()->default_value("1"));
  // clang-format on
  add_threads_option(options);
  const cxxopts::ParseResult r = parse_options(options, argc, argv);
  if (r.count("csv") == r.count("txt")) throw UsageError("give one of --csv and --txt");
  data::EmbedRequest request;
  request.lines = r.count("txt") > 0;
  request.input = request.lines ? r["txt"].as<std::string>() : r["csv"].as<std::string>();
  request.text_column = r["text-column"].as<std::string>();
  request.format = r["format"].as<std::string>();
  request.out = required<std::string>(r, "out");
  data::SkipgramOptions& o = request.options;
  o.dim = r["dim"].as<std::int64_t>();
  o.epochs = r["epochs"].as<std::int64_t>();
  o.window = r["window"].as<std::int64_t>();
  o.negatives = r["negatives"].as<std::int64_t>();
  o.min_count = r["min-count"].as<std::int64_t>();
  o.buckets = r["buckets"].as<std::int64_t>();
  o.lr = r["lr"].as<double>();
  o.sample = r["sample"].as<double>();
  o.seed = r["seed"].as<std::uint64_t>();
  o.threads = threads_option(r);
  const data::SkipgramVectors v = data::embed_file(request);
  std::printf("%zu words of %lld tokens, %lld dimensions, %lld n-gram rows; loss %.4f\nwrote %s%s\n", v.words.size(),
              static_cast<long long>(v.tokens), static_cast<long long>(v.dim), static_cast<long long>(v.buckets), v.loss,
              request.out.c_str(), v.buckets > 0 ? (" and " + request.out + ".subwords").c_str() : "");
  return kExitOk;
}

}  // namespace
}  // namespace attn::apps

int main(int argc, char** argv) { attn::apps::run_app("attn embed", attn::apps::run, argc, argv); }
