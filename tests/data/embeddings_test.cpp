// Word vectors in word2vec / GloVe / fastText text format: headers, gzip, the lowercase fallback, errors.
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/data/embeddings.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {
fs::path temp(const std::string& name) { return fs::temp_directory_path() / ("attn_vectors_" + std::to_string(::getpid()) + "_" + name); }

std::string write(const std::string& name, const std::string& text, bool gzip = false) {
  const std::string path = temp(name).string();
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary) << text;
  }
  return path;
}
}  // namespace

TEST_CASE("word vectors: GloVe (no header), word2vec/fastText (header), gzipped, only the wanted words", "[data][embeddings]") {
  const std::string glove = write("glove.txt", "the 0.1 0.2 0.3\ncat -1 2.5 3e-1\nunwanted 9 9 9\n");
  const auto g = data::read_word_vectors(glove, {"the", "cat", "dog"});
  CHECK(g.dim == 3);
  CHECK(g.lines == 3);
  CHECK(g.vectors.size() == 2);
  CHECK(g.vectors.at("cat") == std::vector<float>{-1.0f, 2.5f, 0.3f});
  const std::string vec = write("ft.vec.gz", "2 2\r\nthe 1 2\r\ncat 3 4\r\n", true);
  const auto f = data::read_word_vectors(vec, {"cat"});
  CHECK(f.dim == 2);
  CHECK(f.vectors.at("cat") == std::vector<float>{3, 4});
  for (const auto& p : {glove, vec}) fs::remove(p);
}

TEST_CASE("word vectors: a word's own spelling wins, another case is the fallback", "[data][embeddings]") {
  const std::string path = write("cased.txt", "Stupid 1 1\nApple 2 2\napple 3 3\nİstanbul 4 4\n");
  const auto v = data::read_word_vectors(path, {"stupid", "apple", "i̇stanbul"});
  CHECK(v.vectors.at("stupid") == std::vector<float>{1, 1});    // only "Stupid" in the file
  CHECK(v.vectors.at("apple") == std::vector<float>{3, 3});     // its own line, though "Apple" came first
  CHECK(v.vectors.at("i̇stanbul") == std::vector<float>{4, 4});  // Python's lower: İ -> i̇
  CHECK(v.lowercase_matches == 2);
  fs::remove(path);
}

TEST_CASE("word vectors: errors name the file and line", "[data][embeddings]") {
  const std::string ragged = write("ragged.txt", "a 1 2 3\nb 1 2\n");
  CHECK_THROWS_WITH(data::read_word_vectors(ragged, {"b"}), Catch::Contains("ragged.txt:2: 2 values where the file has 3"));
  const std::string nan = write("nan.txt", "a 1 x\n");
  CHECK_THROWS_WITH(data::read_word_vectors(nan, {"a"}), Catch::Contains("nan.txt:1: 'x' is not a number"));
  CHECK_THROWS_WITH(data::read_word_vectors(temp("none.txt").string(), {"a"}), Catch::Contains("none.txt: cannot open"));
  const std::string empty = write("empty.txt", "");
  CHECK_THROWS_WITH(data::read_word_vectors(empty, {"a"}), Catch::Contains("no word vectors"));
  for (const auto& p : {ragged, nan, empty}) fs::remove(p);
}
