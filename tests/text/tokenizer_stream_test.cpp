// The tokenizer's parallel engine (fit_stream, transform_stream and the calls built on them):
// threads, blocks and cumulative fits give the sequential result.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "attn/text/tokenizer.h"

using attn::text::Tokenizer;
using attn::text::TokenizerOptions;

TEST_CASE("threaded fitting and transforming equal the sequential result", "[tokenizer]") {
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  const char* pieces[] = {"a", "B", "c", "Σ", "d'e", "\r", "ff", "g.h", "İ", "😀", "x", "y", "zz", "w"};
  for (int i = 0; i < 30000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) s += std::string(pieces[rng() % 14]) + (rng() % 3 ? " " : "");
    texts.push_back(s + std::to_string(rng() % 5000));
  }
  TokenizerOptions o;
  o.num_words = 100;
  Tokenizer one(o), two(o), fused(o);
  one.fit_on_texts(texts, 1);
  two.fit_on_texts(texts, 2);
  REQUIRE(one.to_json() == two.to_json());
  const auto expected = one.texts_to_sequences(texts, 1);
  CHECK(two.texts_to_sequences(texts, 2) == expected);
  attn::text::TransformStats stats;
  CHECK(fused.fit_transform(texts, 2, &stats).to_sequences() == expected);
  CHECK(fused.to_json() == one.to_json());
  CHECK(stats.tokens == stats.emitted + stats.beyond_num_words);

  // Streams in uneven owned blocks, and cumulative fits, give the same tables and sequences.
  Tokenizer streamed(o), twice(o);
  auto stream = streamed.fit_stream(3);
  for (std::size_t i = 0, n = 1; i < texts.size(); i += n, n = n * 3 % 5000 + 1)
    stream.add(std::vector<std::string>(texts.begin() + i, texts.begin() + std::min(texts.size(), i + n)));
  CHECK(stream.finish().to_sequences() == expected);
  CHECK(streamed.to_json() == one.to_json());
  Tokenizer packed(o);  // packed blocks (what the CSV reader hands over), empty texts among them
  auto packed_stream = packed.fit_stream(2);
  for (std::size_t i = 0, n = 1; i < texts.size(); i += n, n = n * 7 % 3000 + 1) {
    attn::text::PackedTexts block;
    for (std::size_t k = i; k < std::min(texts.size(), i + n); ++k) block.push_back(texts[k]);
    packed_stream.add(std::move(block));
  }
  CHECK(packed_stream.finish().to_sequences() == expected);
  CHECK(packed.to_json() == one.to_json());
  const std::vector<std::string> first(texts.begin(), texts.begin() + 12345), rest(texts.begin() + 12345, texts.end());
  twice.fit_on_texts(first, 2);
  twice.fit_on_texts(rest, 2);
  CHECK(twice.to_json() == one.to_json());
  auto transform = one.transform_stream(2);
  transform.add(first);
  transform.add(rest);
  CHECK(transform.finish().to_sequences() == expected);
}

TEST_CASE("reading deobfuscated, fitting reads without the vocabulary and everything after with it", "[tokenizer]") {
  TokenizerOptions o;
  o.deobfuscate = true;
  o.num_words = 6;  // indices 1-5: you, are, a, idiot, stupid
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i) texts.push_back(i % 4 ? "you are a stupid idiot" : "you are a stu pid i d i o t");
  texts.push_back("rare words beyond");
  Tokenizer fitted(o), fused(o);
  fitted.fit_on_texts(texts, 2);
  // The fit counted "stu" and "pid" as written (no vocabulary yet) ...
  CHECK(fitted.word_count("stu") == 10);
  CHECK(fitted.word_index("stupid") == 5);
  // ... and reads them as "stupid" once fitted: the join is a known word, its pieces are not.
  CHECK(fitted.tokenize("you stu pid") == std::vector<std::string>{"you", "stupid"});
  // Only words below num_words count as known: "beyond" (index 10) does not join.
  CHECK(fitted.tokenize("be yond") == std::vector<std::string>{"be", "yond"});
  const auto expected = fitted.texts_to_sequences(texts, 2);
  CHECK(expected[0] == expected[1]);  // the obfuscated row reads as the plain one
  CHECK(fused.fit_transform(texts, 2).to_sequences() == expected);
  CHECK(fused.to_json() == fitted.to_json());
  Tokenizer streamed(o);  // owned blocks, kept for the second reading
  auto stream = streamed.fit_stream(3);
  for (std::size_t i = 0; i < texts.size(); i += 7)
    stream.add(std::vector<std::string>(texts.begin() + i, texts.begin() + std::min(texts.size(), i + 7)));
  CHECK(stream.finish().to_sequences() == expected);
  // Loaded for transforming only (a saved model's tokenizer), with an OOV token that is no join.
  Tokenizer loaded = Tokenizer::from_json(fitted.to_json(), "tokenizer.json", attn::text::TokenizerTables::kForTransform);
  CHECK(loaded.tokenize("you stu pid") == std::vector<std::string>{"you", "stu", "pid"});  // Keras' file does not say deobfuscate
  loaded.read_deobfuscated(true);
  CHECK(loaded.tokenize("you stu pid") == std::vector<std::string>{"you", "stupid"});
  CHECK(loaded.texts_to_sequences(texts, 2) == expected);
  o.oov_token = "unk";  // index 1: stupid is 6, below num_words 7
  o.num_words = 7;
  Tokenizer with_oov(o);
  with_oov.fit_on_texts(texts, 1);
  CHECK(with_oov.tokenize("u nk stu pid") == std::vector<std::string>{"u", "nk", "stupid"});
  Tokenizer plain = fitted;  // the same tables read as Keras reads them: no joins
  plain.read_deobfuscated(false);
  CHECK(plain.tokenize("you stu pid") == std::vector<std::string>{"you", "stu", "pid"});
}
