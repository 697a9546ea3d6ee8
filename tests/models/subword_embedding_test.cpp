// The text classifiers' lookup with subwords (models/subword_embedding.h): fastText's mean of a
// word's row and its n-grams' rows, the same n-grams in TorchScript as in C++ (what Python runs).
#include "attn/text/subwords.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

namespace {

torch::Tensor ids3(const std::vector<std::vector<std::vector<std::int64_t>>>& rows) {
  const auto B = static_cast<std::int64_t>(rows.size()), T = static_cast<std::int64_t>(rows[0].size()),
             W = static_cast<std::int64_t>(rows[0][0].size());
  torch::Tensor out = torch::zeros({B, T, W}, torch::kInt64);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t w = 0; w < W; ++w) out[b][t][w] = rows[b][t][w];
  return out;
}

}  // namespace

TEST_CASE("subword lookup: a word is the mean of its row and its n-grams' rows, without a row, of its n-grams'", "[models][subwords]") {
  for (const char* name : {"bilstm-attention", "transformer-classifier"}) {
    const nlohmann::json c =
        std::string(name) == "bilstm-attention"
            ? nlohmann::json{{"num_words", 20}, {"labels", 2}, {"embed_dim", 6}, {"lstm_units", 3}, {"subword_buckets", 10}}
            : nlohmann::json{{"num_words", 20}, {"labels", 2},      {"d_model", 8},         {"heads", 2},
                             {"layers", 1},     {"feedforward", 8}, {"subword_buckets", 10}};
    torch::jit::Module m = build(name, c);
    const torch::Tensor E = m.attr("embedding").toTensor(), S = m.attr("subword_embedding").toTensor();
    REQUIRE(S.size(0) == 11);
    // row 0: padding; row 1: word 5 with n-grams 3 and 7; row 2: no word row, n-grams 2, 2, 9
    const torch::Tensor ids = ids3({{{0, 0, 0, 0}, {5, 3, 7, 0}, {0, 2, 2, 9}}});
    const torch::Tensor x = m.run_method("lookup", ids).toTensor();
    CHECK(torch::allclose(x[0][0], torch::zeros_like(E[0])));
    CHECK(torch::allclose(x[0][1], (E[5] + S[3] + S[7]) / 3, 1e-5, 1e-6));
    CHECK(torch::allclose(x[0][2], (S[2] + S[2] + S[9]) / 3, 1e-5, 1e-6));
    CHECK(torch::equal(m.run_method("token_mask", ids).toTensor(), torch::tensor({{false, true, true}})));
    // words only: [B, T] ids read the word rows, as before
    CHECK(torch::equal(m.run_method("lookup", torch::tensor({{5, 0}}, torch::kInt64)).toTensor()[0][0], E[5]));
    // padding anywhere changes nothing: the same text padded differently gives the same probabilities
    const auto [p1, a1] = pair_of(m.forward({ids.slice(1, 1)}));
    const auto [p2, a2] = pair_of(m.forward({ids}));
    CHECK(torch::allclose(p1, p2, 1e-5, 1e-6));
    CHECK(a2[0][0].item<float>() == 0.0f);
  }
}

TEST_CASE("subword lookup: gradients reach the n-gram rows a batch reads and no others", "[models][subwords]") {
  torch::jit::Module m =
      build("bilstm-attention", {{"num_words", 20}, {"labels", 2}, {"embed_dim", 6}, {"lstm_units", 3}, {"subword_buckets", 10}});
  m.train();
  const torch::Tensor ids = ids3({{{5, 3, 7}, {0, 2, 0}}});
  const auto [logits, attention] = pair_of(m.run_method("logits", ids));
  logits.sum().backward();
  const torch::Tensor g = m.attr("subword_embedding").toTensor().grad();
  REQUIRE(g.defined());
  const torch::Tensor touched = g.abs().sum(1) != 0;
  for (std::int64_t r = 0; r < 11; ++r) CHECK(touched[r].item<bool>() == (r == 2 || r == 3 || r == 7));
}

TEST_CASE("subword_rows in TorchScript (what Python runs) are text::subword_rows, byte for byte", "[models][subwords]") {
  torch::jit::Module m = build(
      "transformer-classifier",
      {{"num_words", 20}, {"labels", 2}, {"d_model", 8}, {"heads", 2}, {"layers", 1}, {"feedforward", 8}, {"subword_buckets", 32768}});
  // ASCII, Latin-1 letters, a Cyrillic look-alike, a CJK character, an emoji (4 bytes), one letter
  for (const std::string word : {"stuuupid", "id1ot", "na\xc3\xafve",
                                 "\xd1\x96"
                                 "diot",
                                 "\xe4\xb8\xad\xe6\x96\x87", "ok\xf0\x9f\x98\x80", "a", "f", "x_y-z"}) {
    const auto script = m.run_method("subword_rows", word).toIntList().vec();
    const std::vector<std::int32_t> cpp = attn::text::subword_rows(word, 32768);
    CHECK(std::vector<std::int64_t>(cpp.begin(), cpp.end()) == script);
  }
  const torch::Tensor ids = m.run_method("subword_ids", c10::List<std::string>({"the", "zzz"}), c10::List<std::int64_t>({4, 0})).toTensor();
  const auto the = attn::text::subword_rows("the", 32768), zzz = attn::text::subword_rows("zzz", 32768);
  REQUIRE(ids.sizes() == torch::IntArrayRef({1, 2, 1 + static_cast<std::int64_t>(std::max(the.size(), zzz.size()))}));
  CHECK(ids[0][0][0].item<std::int64_t>() == 4);
  CHECK(ids[0][1][0].item<std::int64_t>() == 0);
  CHECK(ids[0][1][1].item<std::int64_t>() == zzz[0]);
}

TEST_CASE("subword_rows in TorchScript with subword_skeletons: text::subword_rows with skeletons, byte for byte", "[models][subwords]") {
  torch::jit::Module m = build(
      "bilstm-attention",
      {{"num_words", 20}, {"labels", 2}, {"embed_dim", 6}, {"lstm_units", 3}, {"subword_buckets", 32768}, {"subword_skeletons", true}});
  CHECK(m.attr("subword_skeletons").toBool());
  for (const std::string word : {"stupid", "stpd", "IdIOT", "a", "ae", "na\xc3\xafve", "\xe4\xb8\xad\xe6\x96\x87", "x_y-zoo"}) {
    const auto script = m.run_method("subword_rows", word).toIntList().vec();
    const std::vector<std::int32_t> cpp = attn::text::subword_rows(word, 32768, true);
    CHECK(std::vector<std::int64_t>(cpp.begin(), cpp.end()) == script);
    CHECK(m.run_method("consonant_skeleton", word).toStringRef() == attn::text::consonant_skeleton(word));
  }
  // without the key the rows are fastText's alone
  torch::jit::Module plain =
      build("bilstm-attention", {{"num_words", 20}, {"labels", 2}, {"embed_dim", 6}, {"lstm_units", 3}, {"subword_buckets", 32768}});
  const std::vector<std::int32_t> cpp = attn::text::subword_rows("stupid", 32768);
  CHECK(plain.run_method("subword_rows", std::string("stupid")).toIntList().vec() == std::vector<std::int64_t>(cpp.begin(), cpp.end()));
}

TEST_CASE("subword_buckets 0 is the word-only model (no n-gram table)", "[models][subwords]") {
  torch::jit::Module m = build("bilstm-attention", {{"num_words", 20}, {"labels", 2}, {"embed_dim", 6}, {"lstm_units", 3}});
  CHECK_FALSE(m.hasattr("subword_embedding"));
  CHECK_FALSE(m.find_method("subword_rows").has_value());
}
