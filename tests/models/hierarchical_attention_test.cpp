// hierarchical-attention (Yang et al. 2016): the batch's regrouping into sentences and documents
// computes what the paper's equations give one document and one sentence at a time.
#include "attn/text/sentences.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

namespace {

const nlohmann::json kSmall = {{"num_words", 50}, {"labels", 2}, {"embed_dim", 6}, {"gru_units", 4}};

torch::Tensor call1(torch::jit::Module& m, const char* module, const char* method, std::vector<c10::IValue> args) {
  return m.attr(module).toModule().get_method(method)(std::move(args)).toTensor();
}

/// One document, given as its sentences' word ids, the way the equations read it: each sentence
/// alone through the word BiGRU and word attention, the sentence vectors through the sentence
/// BiGRU and attention. Returns (logits [labels], word weights per sentence, sentence weights).
struct Reference {
  torch::Tensor logits;
  std::vector<torch::Tensor> word_alpha;
  torch::Tensor sentence_alpha;
};
Reference by_hand(torch::jit::Module& m, const std::vector<std::vector<std::int64_t>>& sentences) {
  const torch::Tensor table = m.attr("embedding").toTensor();
  torch::jit::Module word_attention = m.attr("word_attention").toModule(), sentence_attention = m.attr("sentence_attention").toModule();
  std::vector<torch::Tensor> vectors;
  Reference r;
  for (const auto& words : sentences) {
    const torch::Tensor x = table.index_select(0, torch::tensor(words, torch::kInt64)).unsqueeze(0);  // [1, n, E]
    const torch::Tensor h = call1(m, "word_gru", "forward", {x});
    const auto [s, alpha] = pair_of(word_attention.forward({h}));
    vectors.push_back(s);
    r.word_alpha.push_back(alpha[0]);
  }
  const torch::Tensor hs = call1(m, "sentence_gru", "forward", {torch::cat(vectors).unsqueeze(0)});
  const auto [v, alpha] = pair_of(sentence_attention.forward({hs}));
  r.sentence_alpha = alpha[0];
  r.logits = m.attr("dense").toModule().forward({v}).toTensor()[0];
  return r;
}

/// A row of ids for `sentences` (sentence k's words carry k), padded after to `width`.
std::vector<std::int64_t> row_of(const std::vector<std::vector<std::int64_t>>& sentences, std::size_t width) {
  std::vector<std::int64_t> row;
  for (std::size_t k = 0; k < sentences.size(); ++k)
    for (std::int64_t w : sentences[k]) row.push_back(text::encode_word(static_cast<std::int32_t>(w), static_cast<std::int64_t>(k)));
  row.resize(width, 0);
  return row;
}

}  // namespace

TEST_CASE("hierarchical-attention: a batch computes each document as the equations do, one sentence at a time", "[models][hierarchical]") {
  torch::jit::Module m = build("hierarchical-attention", kSmall);
  const std::vector<std::vector<std::vector<std::int64_t>>> docs = {
      {{3, 4, 5}, {6, 7}, {8, 9, 10, 11}},
      {{12}},  // one sentence of one word
      {{13, 14, 15, 16, 17}, {18, 19}},
  };
  std::vector<std::int64_t> flat;
  for (const auto& d : docs) {
    const auto row = row_of(d, 10);
    flat.insert(flat.end(), row.begin(), row.end());
  }
  const torch::Tensor ids = torch::tensor(flat, torch::kInt64).view({3, 10});
  torch::NoGradGuard no_grad;
  const auto [logits, attention] = pair_of(m.get_method("logits")({ids}));
  const auto [word_weight, sentence_weight] = pair_of(m.get_method("attention_levels")({ids}));
  for (std::size_t d = 0; d < docs.size(); ++d) {
    const Reference r = by_hand(m, docs[d]);
    const auto b = static_cast<std::int64_t>(d);
    CHECK(torch::allclose(logits[b], r.logits, 1e-5, 1e-6));
    std::int64_t t = 0;
    for (std::size_t k = 0; k < docs[d].size(); ++k)
      for (std::size_t w = 0; w < docs[d][k].size(); ++w, ++t) {
        CHECK(word_weight[b][t].item<float>() == Approx(r.word_alpha[k][static_cast<std::int64_t>(w)].item<float>()).margin(1e-6));
        CHECK(sentence_weight[b][t].item<float>() == Approx(r.sentence_alpha[static_cast<std::int64_t>(k)].item<float>()).margin(1e-6));
        CHECK(attention[b][t].item<float>() == Approx(word_weight[b][t].item<float>() * sentence_weight[b][t].item<float>()).margin(1e-7));
      }
    CHECK(attention[b].slice(0, t).abs().sum().item<float>() == 0.0f);  // padding gets no weight
    CHECK(attention[b].sum().item<float>() == Approx(1.0f));
  }
}

TEST_CASE("hierarchical-attention: padding anywhere, removed words and sentence numbers with gaps change nothing",
          "[models][hierarchical]") {
  torch::jit::Module m = build("hierarchical-attention", kSmall);
  torch::NoGradGuard no_grad;
  const auto s = [](std::int32_t w, std::int64_t k) { return static_cast<std::int64_t>(text::encode_word(w, k)); };
  const torch::Tensor plain = torch::tensor({{s(3, 0), s(4, 0), s(5, 1), s(6, 1)}}, torch::kInt64);
  const std::int64_t pad = 0;
  const torch::Tensor padded = torch::tensor({{pad, pad, s(3, 0), s(4, 0), pad, s(5, 1), s(6, 1), pad}}, torch::kInt64);
  // A sentence whose every word was removed (leave-one-out, sufficiency) leaves a gap in the numbers.
  const torch::Tensor gap = torch::tensor({{s(3, 0), s(4, 0), s(5, 2), s(6, 2)}}, torch::kInt64);
  const torch::Tensor p = pair_of(m.get_method("logits")({plain})).first;
  CHECK(torch::allclose(pair_of(m.get_method("logits")({padded})).first, p, 1e-5, 1e-6));
  CHECK(torch::allclose(pair_of(m.get_method("logits")({gap})).first, p, 1e-5, 1e-6));
}

TEST_CASE("hierarchical-attention: a document without words gets the bias and no weight, beside others or alone",
          "[models][hierarchical]") {
  torch::jit::Module m = build("hierarchical-attention", kSmall);
  torch::NoGradGuard no_grad;
  const torch::Tensor bias = m.attr("dense").toModule().attr("bias").toTensor();
  const torch::Tensor mixed = torch::tensor({{3, 4, 0}, {0, 0, 0}}, torch::kInt64);
  const auto [logits, attention] = pair_of(m.get_method("logits")({mixed}));
  CHECK(torch::allclose(logits[1], bias));
  CHECK(attention[1].abs().sum().item<float>() == 0.0f);
  CHECK(torch::isfinite(logits).all().item<bool>());
  const auto [alone, none] = pair_of(m.get_method("logits")({torch::zeros({2, 3}, torch::kInt64)}));
  CHECK(torch::allclose(alone, bias.expand({2, -1})));
  CHECK(none.abs().sum().item<float>() == 0.0f);
}

TEST_CASE("hierarchical-attention: attn's kernels compute what PyTorch's operators do, gradients included", "[models][hierarchical]") {
  torch::jit::Module portable = build("hierarchical-attention", kSmall, nn::Runtime::kPortable);
  torch::jit::Module native = build("hierarchical-attention", kSmall, nn::Runtime::kNative);
  const auto s = [](std::int32_t w, std::int64_t k) { return static_cast<std::int64_t>(text::encode_word(w, k)); };
  const std::int64_t pad = 0;
  const torch::Tensor ids = torch::tensor({{s(3, 0), s(9, 0), s(5, 1), pad}, {s(7, 0), s(8, 1), s(9, 1), s(2, 2)}}, torch::kInt64);
  const torch::Tensor x = portable.get_method("embeddings")({ids}).toTensor().detach().requires_grad_();
  const torch::Tensor x2 = x.detach().clone().requires_grad_();
  const torch::Tensor a = pair_of(portable.get_method("logits_embedded")({x, ids})).first;
  const torch::Tensor b = pair_of(native.get_method("logits_embedded")({x2, ids})).first;
  CHECK(torch::allclose(a, b, 1e-5, 1e-6));
  a.sum().backward();
  b.sum().backward();
  CHECK(torch::allclose(x.grad(), x2.grad(), 1e-4, 1e-6));
  CHECK(x.grad()[0][3].abs().sum().item<float>() == 0.0f);  // nothing flows to padding
  CHECK(x.grad()[1][3].abs().sum().item<float>() > 0.0f);
}

TEST_CASE("hierarchical-attention: num_words above 2^20 is refused (ids carry their sentence above)", "[models][hierarchical]") {
  const auto& entry = models::find_model("hierarchical-attention");
  CHECK(entry.reads_sentences);
  nlohmann::json c = kSmall;
  c["num_words"] = (1 << 20) + 1;
  CHECK_THROWS_WITH(entry.build(models::resolve_config(entry, c), nn::Runtime::kPortable), Catch::Contains("2^20"));
}
