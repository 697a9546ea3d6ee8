// Skip-gram with subwords (data/skipgram.h) and the vectors' files (data/embeddings.h's readers).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>
#include <catch2/catch.hpp>

#include "attn/data/embeddings.h"
#include "attn/data/skipgram.h"
#include "attn/text/subwords.h"

using namespace attn;

namespace {

/// Texts of three topics whose words never meet: each text six words of one topic.
std::vector<std::string> topics() {
  const std::vector<std::vector<std::string>> groups = {
      {"apple", "pear", "plum", "grape", "melon"}, {"train", "bus", "tram", "ferry", "plane"}, {"red", "blue", "green", "pink", "brown"}};
  std::mt19937 rng(5);
  std::vector<std::string> texts;
  for (int i = 0; i < 1500; ++i) {
    const auto& g = groups[static_cast<std::size_t>(i % 3)];
    std::string t;
    for (int w = 0; w < 6; ++w) t += (w ? " " : "") + g[rng() % g.size()];
    texts.push_back(t);
  }
  return texts;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

/// The topic (0, 1, 2) of each word's nearest other word, by cosine.
std::map<std::string, std::string> nearest(const data::SkipgramVectors& v) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < v.words.size(); ++i) {
    double best = -2;
    for (std::size_t j = 0; j < v.words.size(); ++j) {
      if (i == j) continue;
      const double c = cosine(v.vector(i), v.vector(j));
      if (c > best) {
        best = c;
        out[v.words[i]] = v.words[j];
      }
    }
  }
  return out;
}

std::string topic(const std::string& w) {
  for (const char* f : {"apple", "pear", "plum", "grape", "melon"})
    if (w == f) return "fruit";
  for (const char* f : {"train", "bus", "tram", "ferry", "plane"})
    if (w == f) return "transport";
  return "colour";
}

std::string scratch(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("attn_skipgram_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return (d / name).string();
}

/// Small vectors of the topics, one pass: what the file and layout tests read.
data::SkipgramVectors small_vectors(std::int64_t buckets, bool skeletons = false) {
  data::SkipgramOptions o;
  o.dim = 4;
  o.epochs = 1;
  o.buckets = buckets;
  o.skeletons = skeletons;
  return data::train_skipgram(topics(), o);
}

}  // namespace

TEST_CASE("skip-gram: words that share contexts end up nearest, with and without subwords", "[data][skipgram]") {
  for (const std::int64_t buckets : {std::int64_t{0}, std::int64_t{512}}) {
    data::SkipgramOptions o;
    o.dim = 16;
    o.epochs = 3;
    o.buckets = buckets;
    o.sample = 1;  // (15 words: no subsampling)
    const data::SkipgramVectors v = data::train_skipgram(topics(), o);
    REQUIRE(v.words.size() == 15);
    CHECK(v.input.size() == static_cast<std::size_t>((15 + buckets) * 16));
    CHECK(v.tokens == 1500 * 6);
    for (const auto& [word, near] : nearest(v)) CHECK(topic(word) == topic(near));
    // the same vectors on every run (one thread)
    CHECK(data::train_skipgram(topics(), o).input == v.input);
  }
}

TEST_CASE("skip-gram vectors: a word's vector is the mean of its own row and its n-grams' rows", "[data][skipgram]") {
  for (const bool skeletons : {false, true}) {  // with skeletons (--pretrain for a model with --skeletons), their n-grams too
    const data::SkipgramVectors v = small_vectors(64, skeletons);
    CHECK(v.skeletons == skeletons);
    const std::size_t w = 0;
    const std::vector<std::int32_t> rows = text::subword_rows(v.words[w], 64, skeletons);
    if (skeletons) CHECK(rows.size() > text::subword_rows(v.words[w], 64).size());  // the first word has a vowel to drop
    for (std::int64_t i = 0; i < 4; ++i) {
      double sum = v.input[w * 4 + static_cast<std::size_t>(i)];
      for (std::int32_t r : rows) sum += v.input[static_cast<std::size_t>((15 + r - 1) * 4 + i)];
      CHECK(v.vector(w)[static_cast<std::size_t>(i)] == Approx(sum / (1 + rows.size())).margin(1e-6));
    }
  }
}

TEST_CASE("skip-gram files: the .vec words' vectors and .subwords' own and n-gram rows read back", "[data][skipgram]") {
  const data::SkipgramVectors v = small_vectors(32);
  const std::string path = scratch("v.vec");
  data::write_skipgram_vectors(v, path);
  const std::unordered_set<std::string> wanted = {"plum", "ferry", "absent"};
  const data::WordVectors vec = data::read_word_vectors(path, wanted);
  REQUIRE(vec.dim == 4);
  CHECK(vec.lines == 15);
  const data::SubwordRows sub = data::read_subword_rows(path + ".subwords", wanted);
  CHECK(sub.buckets == 32);
  CHECK(sub.words.size() == 2);
  for (std::size_t i = 0; i < v.words.size(); ++i) {
    if (!wanted.count(v.words[i])) continue;
    for (std::size_t k = 0; k < 4; ++k) {
      CHECK(vec.vectors.at(v.words[i])[k] == Approx(v.vector(i)[k]).epsilon(1e-5).margin(1e-6));
      CHECK(sub.words.at(v.words[i])[k] == Approx(v.input[i * 4 + k]).epsilon(1e-5).margin(1e-6));
    }
  }
  for (std::size_t k = 0; k < 32 * 4; ++k) CHECK(sub.ngrams[k] == Approx(v.input[15 * 4 + k]).epsilon(1e-5).margin(1e-6));
  // In memory (what `attn train --pretrain-epochs` starts a model from): what the files read back.
  const data::WordVectors vec_memory = data::word_vectors_of(v, wanted);
  const data::SubwordRows sub_memory = data::subword_rows_of(v, wanted);
  CHECK(vec_memory.dim == 4);
  CHECK(vec_memory.lines == 15);
  REQUIRE(vec_memory.vectors.size() == 2);  // "absent" is no word of the texts
  REQUIRE(sub_memory.words.size() == 2);
  CHECK(sub_memory.buckets == 32);
  for (const auto& [word, x] : vec_memory.vectors)
    for (std::size_t k = 0; k < 4; ++k) {
      CHECK(x[k] == Approx(vec.vectors.at(word)[k]).epsilon(1e-5).margin(1e-6));
      CHECK(sub_memory.words.at(word)[k] == Approx(sub.words.at(word)[k]).epsilon(1e-5).margin(1e-6));
    }
  REQUIRE(sub_memory.ngrams.size() == sub.ngrams.size());
  for (std::size_t k = 0; k < sub.ngrams.size(); ++k) CHECK(sub_memory.ngrams[k] == Approx(sub.ngrams[k]).epsilon(1e-5).margin(1e-6));
  // words only: no .subwords file
  const data::SkipgramVectors words = small_vectors(0);
  const std::string words_only = scratch("w.vec");
  data::write_skipgram_vectors(words, words_only);
  CHECK_FALSE(std::filesystem::exists(words_only + ".subwords"));
  CHECK(data::subword_rows_of(words, wanted).ngrams.empty());
}

TEST_CASE("skip-gram: bad options and files are refused, naming the option, file and line", "[data][skipgram]") {
  data::SkipgramOptions o;
  o.dim = 0;
  CHECK_THROWS_WITH(data::train_skipgram(topics(), o), Catch::Contains("--dim"));
  o = {};
  o.min_count = 100000;
  CHECK_THROWS_WITH(data::train_skipgram(topics(), o), Catch::Contains("--min-count"));
  const std::string bad = scratch("bad.subwords");
  std::ofstream(bad) << "attn-subwords 1 2 2 3 6\nplum 0.5 0.25\n1 2\n1 x\n";
  CHECK_THROWS_WITH(data::read_subword_rows(bad, {"plum"}), Catch::Contains("bad.subwords:4") && Catch::Contains("'x'"));
  std::ofstream(bad) << "attn-subwords 1 2 2 2 5\n";
  CHECK_THROWS_WITH(data::read_subword_rows(bad, {}), Catch::Contains("bad.subwords:1"));
  std::ofstream(bad) << "attn-subwords 1 2 2 3 6\nplum 0.5 0.25\n1 2\n";
  CHECK_THROWS_WITH(data::read_subword_rows(bad, {}), Catch::Contains("bad.subwords") && Catch::Contains("ends"));
  data::EmbedRequest r;
  r.input = scratch("bad.txt");
  r.lines = true;
  r.out = scratch("out.vec");
  std::ofstream(r.input) << "fine text\nbad \xff byte\n";
  CHECK_THROWS_WITH(data::embed_file(r), Catch::Contains("bad.txt:2") && Catch::Contains("UTF-8"));
  CHECK_FALSE(std::filesystem::exists(r.out));
}

TEST_CASE("embed_file: a table's text column", "[data][skipgram]") {
  data::EmbedRequest r;
  r.input = scratch("t.csv");
  {
    std::ofstream f(r.input);
    f << "id,body\n";
    int i = 0;
    for (const std::string& t : topics()) f << ++i << ",\"" << t << "\"\n";
  }
  r.text_column = "body";
  r.out = scratch("t.vec");
  r.options.dim = 8;
  r.options.epochs = 1;
  const data::SkipgramVectors v = data::embed_file(r);
  CHECK(v.words.size() == 15);
  CHECK(std::filesystem::exists(r.out));
  r.text_column = "text";
  CHECK_THROWS_WITH(data::embed_file(r), Catch::Contains("t.csv") && Catch::Contains("text"));
}
