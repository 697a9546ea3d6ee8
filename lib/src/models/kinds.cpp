#include "attn/models/kinds.h"

#include "attn/models/ensemble.h"

#include <stdexcept>

namespace attn::models {
namespace {

Scored scored(const c10::IValue& v) {
  const auto t = v.toTuple();
  return {t->elements()[0].toTensor(), t->elements()[1].toTensor()};
}

}  // namespace

void require_interface(ModelKind kind, const torch::jit::Module& module, const std::string& what) {
  std::vector<const char*> methods = {"forward", "logits"}, attributes;
  if (kind == ModelKind::kSeq2Seq) {
    methods = {"logits", "translate"};
    attributes = {"start_id", "end_id", "max_output_length"};
  }
  for (const char* m : methods)
    if (!module.find_method(m)) throw std::runtime_error(what + ": the model has no TorchScript method '" + m + "'");
  for (const char* a : attributes)
    if (!module.hasattr(a)) throw std::runtime_error(what + ": the model has no attribute '" + std::string(a) + "'");
}

Scored TextClassifier::forward(const torch::Tensor& ids) { return scored(module_.forward({ids})); }
Scored TextClassifier::logits(const torch::Tensor& ids) { return scored(module_.get_method("logits")({ids})); }
std::vector<Scored> TextClassifier::member_logits(const torch::Tensor& ids) {
  if (!module_.find_method("member_logits")) return {logits(ids)};
  const Scored stacked = scored(module_.get_method("member_logits")({ids}));
  std::vector<Scored> out;
  for (std::int64_t i = 0; i < stacked.scores.size(0); ++i) out.push_back({stacked.scores[i], stacked.attention[i]});
  return out;
}
bool TextClassifier::has_self_attention() const { return module_.find_method("self_attention").has_value(); }
std::vector<torch::Tensor> TextClassifier::self_attention(const torch::Tensor& ids) {
  return module_.get_method("self_attention")({ids}).toTensorVector();
}

bool TextClassifier::has_embedded() const {
  return module_.find_method("embeddings").has_value() && module_.find_method("logits_embedded").has_value();
}
torch::Tensor TextClassifier::embeddings(const torch::Tensor& ids) { return module_.get_method("embeddings")({ids}).toTensor(); }
Scored TextClassifier::logits_embedded(const torch::Tensor& x, const torch::Tensor& ids) {
  return scored(module_.get_method("logits_embedded")({x, ids}));
}

Scored FeatureClassifier::forward(const torch::Tensor& x) { return scored(module_.forward({x})); }
Scored FeatureClassifier::logits(const torch::Tensor& x) { return scored(module_.get_method("logits")({x})); }

Scored Seq2SeqModel::logits(const torch::Tensor& source, const torch::Tensor& target_in) {
  return scored(module_.get_method("logits")({source, target_in}));
}
bool TextClassifier::has_sentences() const { return module_.find_method("attention_levels").has_value(); }
std::pair<torch::Tensor, torch::Tensor> TextClassifier::attention_levels(const torch::Tensor& ids) {
  const auto out = module_.get_method("attention_levels")({ids}).toTuple();
  return {out->elements().at(0).toTensor(), out->elements().at(1).toTensor()};
}

bool Seq2SeqModel::has_embedded() const {
  return module_.find_method("source_embeddings").has_value() && module_.find_method("logits_embedded").has_value();
}
torch::Tensor Seq2SeqModel::source_embeddings(const torch::Tensor& source) {
  return module_.get_method("source_embeddings")({source}).toTensor();
}
Scored Seq2SeqModel::logits_embedded(const torch::Tensor& x, const torch::Tensor& source, const torch::Tensor& target_in) {
  return scored(module_.get_method("logits_embedded")({x, source, target_in}));
}

Scored Seq2SeqModel::translate(const torch::Tensor& source, std::int64_t max_length) {
  return scored(module_.get_method("translate")({source, max_length}));
}
Scored Seq2SeqModel::beam_search(const torch::Tensor& source, std::int64_t beam, std::int64_t max_length) {
  if (!module_.find_method("beam_search"))
    throw std::runtime_error("this model file has no beam_search method (saved before attn 0.2): retrain it for --beam");
  return scored(module_.get_method("beam_search")({source, beam, max_length}));
}

torch::Tensor SpanTagger::logits(const torch::Tensor& ids) { return module_.get_method("logits")({ids}).toTensor(); }
torch::Tensor SpanTagger::forward(const torch::Tensor& ids) { return module_.forward({ids}).toTensor(); }
std::vector<torch::Tensor> SpanTagger::member_logits(const torch::Tensor& ids) {
  if (!module_.find_method("member_logits")) return {logits(ids)};
  return module_.get_method("member_logits")({ids}).toTensor().unbind(0);
}

bool SpanTagger::is_crf() const {
  const torch::jit::Module first = ensemble_members(module_).front();
  return first.hasattr("has_crf") && first.attr("has_crf").toBool();
}

std::vector<std::pair<torch::Tensor, torch::Tensor>> SpanTagger::member_crf_loss(const torch::Tensor& ids, const torch::Tensor& targets) {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> out;
  for (torch::jit::Module& m : ensemble_members(module_)) {
    const auto both = m.get_method("crf_loss")({ids, targets}).toTuple();
    out.emplace_back(both->elements()[0].toTensor(), both->elements()[1].toTensor());
  }
  return out;
}

std::int64_t Seq2SeqModel::start_id() const { return module_.attr("start_id").toInt(); }
std::int64_t Seq2SeqModel::end_id() const { return module_.attr("end_id").toInt(); }
std::int64_t Seq2SeqModel::max_output_length() const { return module_.attr("max_output_length").toInt(); }

}  // namespace attn::models
