// seq2seq-attention (seeds 002, 003): every score and style of the library.
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

TEST_CASE("seq2seq-attention: every score and style, masked source, greedy decoding stops at the end", "[models][seq2seq]") {
  for (const char* style : {"bahdanau", "luong"})
    for (const char* score : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) {
      INFO(style << " / " << score);
      torch::jit::Module m = build("seq2seq-attention", {{"source_vocab", 12},
                                                         {"target_vocab", 9},
                                                         {"embed_dim", 6},
                                                         {"units", 5},
                                                         {"score", score},
                                                         {"style", style},
                                                         {"max_source_length", 16},
                                                         {"max_output_length", 7}});
      const torch::Tensor src = torch::tensor({{3, 4, 5, 0, 0}, {6, 7, 8, 9, 2}}, torch::kInt64);
      const torch::Tensor tgt = torch::tensor({{8, 1, 2, 3}, {8, 4, 5, 0}}, torch::kInt64);
      const auto [logits, att] = pair_of(m.get_method("logits")({src, tgt}));
      CHECK(logits.sizes() == torch::IntArrayRef({2, 4, 9}));
      CHECK(att.sizes() == torch::IntArrayRef({2, 4, 5}));
      CHECK(att[0].slice(1, 3).abs().sum().item<float>() == 0.0f);  // padding gets no attention
      CHECK(torch::allclose(att.sum(2), torch::ones({2, 4}), 1e-5, 1e-6));
      // The first row alone (no padding) gives what it gave in the padded batch.
      const auto [alone, att_alone] = pair_of(m.get_method("logits")({src.slice(0, 0, 1).slice(1, 0, 3), tgt.slice(0, 0, 1)}));
      CHECK(torch::allclose(alone, logits.slice(0, 0, 1), 1e-5, 1e-6));
      CHECK(torch::allclose(att_alone, att.slice(0, 0, 1).slice(2, 0, 3), 1e-5, 1e-6));
      const auto [ids, att2] = pair_of(m.forward({src}));
      // Beam search with one hypothesis is greedy decoding; a wider beam gives outputs of the same form.
      const auto [beam_ids, beam_att] = pair_of(m.get_method("beam_search")({src, 1, 7}));
      CHECK(torch::equal(beam_ids, ids));
      CHECK(torch::allclose(beam_att, att2, 1e-5, 1e-6));
      const auto [wide_ids, wide_att] = pair_of(m.get_method("beam_search")({src, 3, 7}));
      CHECK(wide_ids.size(0) == 2);
      CHECK(wide_att.sizes() == torch::IntArrayRef({2, wide_ids.size(1), 5}));
      CHECK(wide_att[0].slice(1, 3).abs().sum().item<float>() == 0.0f);
      CHECK(ids.size(0) == 2);
      CHECK(ids.size(1) <= 7);
      CHECK(att2.size(1) == ids.size(1));
      for (int b = 0; b < 2; ++b) {  // after the end id (7) only padding
        bool ended = false;
        for (int t = 0; t < ids.size(1); ++t) {
          const auto v = ids[b][t].item<std::int64_t>();
          if (ended) CHECK(v == 0);
          ended = ended || v == 7;
        }
      }
    }
}
