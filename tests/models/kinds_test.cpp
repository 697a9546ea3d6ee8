// What kind a model is: the interface a file of each kind must have, and the typed facades that call
// its methods (on a hand-written TorchScript module, so each answer is known).
#include "attn/models/kinds.h"
#include "models_test_util.h"

using namespace attn;
using models::ModelKind;

namespace {

/// A module with forward (scores 2 x ids, attention ids) and logits (scores ids + 1); no optional method.
torch::jit::Module doubling_module() {
  torch::jit::Module m("Probe");
  m.define(R"(
def forward(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    return ids.float() * 2.0, ids.float()

def logits(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    return ids.float() + 1.0, ids.float()
)");
  return m;
}

}  // namespace

TEST_CASE("require_interface: a file lacking a method or attribute of its kind is refused, naming the file and it", "[models][kinds]") {
  torch::jit::Module m("Probe");
  m.define("def forward(self, ids: Tensor) -> Tuple[Tensor, Tensor]:\n    return ids.float(), ids.float()\n");
  CHECK_THROWS_WITH(models::require_interface(ModelKind::kTextClassifier, m, "m.pt"), "m.pt: the model has no TorchScript method 'logits'");
  m = doubling_module();
  CHECK_NOTHROW(models::require_interface(ModelKind::kTextClassifier, m, "m.pt"));
  CHECK_NOTHROW(models::require_interface(ModelKind::kFeatureClassifier, m, "m.pt"));
  CHECK_THROWS_WITH(models::require_interface(ModelKind::kSeq2Seq, m, "m.pt"), "m.pt: the model has no TorchScript method 'translate'");
  m.define("def translate(self, src: Tensor, max_length: int) -> Tuple[Tensor, Tensor]:\n    return src, src.float()\n");
  CHECK_THROWS_WITH(models::require_interface(ModelKind::kSeq2Seq, m, "m.pt"), "m.pt: the model has no attribute 'start_id'");
  for (const char* a : {"start_id", "end_id", "max_output_length"}) m.register_attribute(a, c10::IntType::get(), std::int64_t{3});
  CHECK_NOTHROW(models::require_interface(ModelKind::kSeq2Seq, m, "m.pt"));
}

TEST_CASE("the facades: each method's two outputs, member_logits of one model is its logits, optional methods absent", "[models][kinds]") {
  models::TextClassifier text(doubling_module());
  const torch::Tensor ids = torch::tensor({{1, 2, 3}}, torch::kInt64);
  CHECK(torch::equal(text.forward(ids).scores, torch::tensor({{2.0f, 4.0f, 6.0f}})));
  CHECK(torch::equal(text.forward(ids).attention, ids.to(torch::kFloat)));
  CHECK(torch::equal(text.logits(ids).scores, torch::tensor({{2.0f, 3.0f, 4.0f}})));
  const auto members = text.member_logits(ids);
  REQUIRE(members.size() == 1);
  CHECK(torch::equal(members[0].scores, text.logits(ids).scores));
  CHECK_FALSE(text.has_self_attention());
  CHECK_FALSE(text.has_embedded());
  CHECK_FALSE(text.has_sentences());
  models::FeatureClassifier features(doubling_module());
  CHECK(torch::equal(features.logits(ids).scores, text.logits(ids).scores));
  torch::jit::Module m = doubling_module();
  m.register_attribute("start_id", c10::IntType::get(), std::int64_t{1});
  models::Seq2SeqModel seq2seq(m);
  CHECK(seq2seq.start_id() == 1);
  CHECK_FALSE(seq2seq.has_embedded());
  CHECK_THROWS_WITH(seq2seq.beam_search(ids, 2, 5), Catch::Contains("no beam_search method"));
}
