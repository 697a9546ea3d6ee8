// The registry: every registered model is covered here without editing a list; config resolution
// and fitting to the data; layer tables that count every parameter once.
#include <optional>
#include <set>

#include "attn/models/kinds.h"
#include "attn/models/saved_model.h"
#include "models_test_util.h"

using namespace attn;
using namespace models_test;

namespace {

/// A tiny batch for a model of `kind` (with padding where the kind has any), the method's outputs,
/// and the padded positions' mask (true = real) of the attention's last dimension.
struct Probe {
  std::vector<c10::IValue> inputs;
  torch::Tensor real;  ///< [B, T]: where attention may go
};

Probe probe_for(models::ModelKind kind, const nlohmann::json& config) {
  switch (kind) {
    case models::ModelKind::kTextClassifier: {
      const torch::Tensor ids = torch::tensor({{0, 0, 5, 7, 9}, {3, 4, 1, 2, 8}}, torch::kInt64);
      return {{ids}, ids != 0};
    }
    case models::ModelKind::kFeatureClassifier: {
      const torch::Tensor x = torch::randn({3, config.at("features").get<std::int64_t>()});
      return {{x}, torch::ones_like(x) != 0};
    }
    case models::ModelKind::kSeq2Seq: {
      const torch::Tensor src = torch::tensor({{3, 4, 5, 0, 0}, {6, 7, 8, 9, 2}}, torch::kInt64);
      return {{src}, src != 0};
    }
    case models::ModelKind::kSpanTagger: {
      const torch::Tensor ids = torch::tensor({{5, 7, 9, 0, 0}, {3, 4, 1, 2, 8}}, torch::kInt64);
      return {{ids}, ids != 0};
    }
  }
  FAIL("a model kind without a probe");
  return {};
}

/// A method's outputs as (scores, attention): a span tagger's one output is per position, where
/// its "attention" is its probabilities (logits: their sizes) normalised over the positions (what the checks read).
std::pair<torch::Tensor, torch::Tensor> outputs_of(models::ModelKind kind, const c10::IValue& out) {
  if (kind != models::ModelKind::kSpanTagger) return pair_of(out);
  const torch::Tensor p = out.toTensor(), w = p.abs();  // (logits may be negative)
  return {p, w / w.sum(-1, true).clamp_min(1e-30)};
}

/// Every parameter's gradient of a scalar of the model's training outputs (logits), flattened into
/// one vector, in training mode with the module's dropout switched off.
torch::Tensor gradients_of(torch::jit::Module& m, models::ModelKind kind, const Probe& probe) {
  for (const auto& p : m.named_parameters(true)) p.value.mutable_grad() = torch::Tensor();
  std::vector<c10::IValue> inputs = probe.inputs;
  if (kind == models::ModelKind::kSeq2Seq) inputs.push_back(torch::tensor({{1, 2, 3}, {4, 5, 6}}, torch::kInt64));  // target_in
  const auto [logits, attention] = outputs_of(kind, m.get_method("logits")(inputs));
  (logits.sin().sum() + attention.cos().sum()).backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : m.named_parameters(true))
    grads.push_back(p.value.grad().defined() ? p.value.grad().reshape({-1}) : torch::zeros({p.value.numel()}));
  return torch::cat(grads);
}

}  // namespace

TEST_CASE("every registered model: builds from its defaults, masks padding, reloads equal, counts every parameter once",
          "[models][registry]") {
  REQUIRE(models::models().size() >= 4);
  const auto dir = scratch("registry");
  for (const models::ModelEntry& entry : models::models()) {
    INFO(entry.name);
    const nlohmann::json config = models::resolve_config(entry, {});
    torch::manual_seed(1);
    torch::jit::Module m = entry.build(config, nn::Runtime::kPortable);
    m.eval();
    CHECK_NOTHROW(models::require_interface(entry.kind, m, entry.name));
    const Probe probe = probe_for(entry.kind, config);
    const auto [scores, attention] = outputs_of(entry.kind, m.forward(probe.inputs));
    // Attention: exactly 0 on padding; each output step's weights sum to 1 over the real positions.
    const torch::Tensor w = attention.dim() == 3 ? attention : attention.unsqueeze(1);  // [B, steps, T]
    const torch::Tensor real = probe.real.unsqueeze(1).expand_as(w);
    CHECK(w.masked_select(torch::logical_not(real)).abs().sum().item<float>() == 0.0f);
    const torch::Tensor sums = w.sum(-1), produced = sums > 0;
    CHECK(produced.any().item<bool>());
    CHECK(torch::allclose(sums.masked_select(produced), torch::ones_like(sums.masked_select(produced)), 1e-5, 1e-6));
    // Saved and loaded with torch::jit::load: the same outputs.
    const std::string path = (dir / (entry.name + ".pt")).string();
    m.save(path);
    const auto [scores2, attention2] = outputs_of(entry.kind, torch::jit::load(path).forward(probe.inputs));
    CHECK(torch::equal(scores, scores2));
    CHECK(torch::equal(attention, attention2));
    // The layer table: every parameter in exactly one row; the rows add up to the total.
    const models::LayerTable t = models::layer_table(entry, m, config);
    CHECK(t.unassigned.empty());
    CHECK(t.ambiguous.empty());
    std::int64_t sum = 0;
    for (const auto& r : t.rows) sum += r.count;
    CHECK(sum == t.total);
    CHECK(t.total == parameter_count(m));
    // The native build (attn's kernels) with these weights computes the same, and so do its
    // gradients in training mode (dropout off: the same function).
    torch::manual_seed(2);
    torch::jit::Module native = entry.build(config, nn::Runtime::kNative);
    models::copy_weights(m, native);
    native.eval();
    const auto [scores3, attention3] = outputs_of(entry.kind, native.forward(probe.inputs));
    CHECK(torch::allclose(scores3, scores, 1e-5, 1e-5));
    CHECK(torch::allclose(attention3, attention, 1e-5, 1e-5));
    CHECK(gradients_of(native, entry.kind, probe).allclose(gradients_of(m, entry.kind, probe), 1e-4, 1e-5));
    // A training recipe of its own (its keys and values are checked by the training table:
    // tests/train/options_test.cpp).
    CHECK(entry.training.at("epochs").get<int>() >= 1);
    CHECK(entry.training.at("batch_size").get<std::int64_t>() >= 1);
    CHECK(entry.training.at("lr").get<double>() > 0);
    CHECK((entry.training.at("val_split").get<double>() >= 0 && entry.training.at("val_split").get<double>() < 1));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("registry: one list, config defaults and overrides, clear errors", "[models][registry]") {
  std::vector<std::string> names;
  for (const auto& m : models::models()) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"bilstm-attention", "feature-attention", "seq2seq-attention", "transformer-classifier",
                                          "hierarchical-attention", "bilstm-tagger"});
  CHECK(models::find_model("feature-attention").kind == models::ModelKind::kFeatureClassifier);
  CHECK(models::find_model("seq2seq-attention").kind == models::ModelKind::kSeq2Seq);
  CHECK(models::find_model("transformer-classifier").kind == models::ModelKind::kTextClassifier);
  CHECK_THROWS_WITH(models::find_model("gpt"), Catch::Contains("unknown model 'gpt'") && Catch::Contains("bilstm-attention"));
  const auto& entry = models::find_model("bilstm-attention");
  const auto config = models::resolve_config(entry, {{"lstm_units", 30}});
  CHECK(config["lstm_units"] == 30);
  CHECK(config["embed_dim"] == 128);
  CHECK_THROWS_AS(models::resolve_config(entry, {{"lstm_unit", 30}}), std::invalid_argument);
  CHECK_THROWS_WITH(models::resolve_config(entry, {{"lstm_unit", 30}}), Catch::Contains("no config key 'lstm_unit'"));
  CHECK_THROWS_WITH(models::resolve_config(entry, {{"lstm_units", "many"}}), Catch::Contains("expects a value like 60"));
  CHECK_THROWS_AS(entry.build(models::resolve_config(entry, {{"spatial_dropout", 1.5}}), nn::Runtime::kPortable), std::invalid_argument);
  const auto& s2s = models::find_model("seq2seq-attention");
  CHECK_THROWS_WITH(s2s.build(models::resolve_config(s2s, {{"score", "manhattan"}}), nn::Runtime::kPortable),
                    Catch::Contains("unknown attention score 'manhattan'") && Catch::Contains("scaled-dot"));
  CHECK_THROWS_WITH(s2s.build(models::resolve_config(s2s, {{"style", "vaswani"}}), nn::Runtime::kPortable), Catch::Contains("'style'"));
}

TEST_CASE("fit_config: the data fixes counts exactly and limits from below, user values are checked", "[models][registry]") {
  models::DataSizes data;
  data.vocabulary = 5000;
  data.labels = 3;
  data.input_length = 700;
  const auto& bilstm = models::find_model("bilstm-attention");
  const auto fitted = models::fit_config(bilstm, {{"lstm_units", 8}}, data);
  CHECK(fitted["num_words"] == 5000);
  CHECK(fitted["labels"] == 3);
  CHECK(fitted["lstm_units"] == 8);
  CHECK(models::fit_config(bilstm, {{"num_words", 8000}}, data)["num_words"] == 8000);  // more rows than needed: fine
  CHECK_THROWS_WITH(models::fit_config(bilstm, {{"num_words", 100}}, data),
                    Catch::Contains("config key 'num_words' must be at least the data's 5000, got 100"));
  CHECK_THROWS_WITH(models::fit_config(bilstm, {{"labels", 6}}, data), Catch::Contains("config key 'labels' must be the data's 3, got 6"));
  const auto& transformer = models::find_model("transformer-classifier");
  CHECK(models::fit_config(transformer, {}, data)["max_length"] == 700);
  data.input_length = 100;
  CHECK(models::fit_config(transformer, {}, data)["max_length"] == 512);
  CHECK_THROWS_WITH(models::fit_config(transformer, {{"max_length", 50}}, data), Catch::Contains("'max_length' must be at least"));
  models::DataSizes features;
  features.features = 7;
  features.labels = 1;
  CHECK(models::fit_config(models::find_model("feature-attention"), {}, features)["features"] == 7);
}

TEST_CASE("every key a model's fit sets from the data says so (what --dump-config lists), and no other does", "[models][registry]") {
  // Sizes large enough to move every key, clamped or not (a transformer's max_length is at least 512).
  const auto fitted = [](const models::ModelEntry& entry, std::int64_t n, std::int64_t labels, bool one_class = false,
                         std::int64_t buckets = 0, bool skeletons = false) -> std::optional<nlohmann::json> {
    try {
      return models::fit_config(entry, nlohmann::json::object(), models::DataSizes{n, labels, n, n, n, n, one_class, buckets, skeletons});
    } catch (const std::exception&) {
      return std::nullopt;  // a size this model refuses (feature-attention: one label)
    }
  };
  for (const models::ModelEntry& entry : models::models()) {
    INFO(entry.name);
    std::set<std::string> moved;
    for (const auto& [a, b] :
         {std::make_pair(fitted(entry, 1000, 1), fitted(entry, 3000, 1)), std::make_pair(fitted(entry, 1000, 2), fitted(entry, 1000, 3)),
          std::make_pair(fitted(entry, 1000, 3), fitted(entry, 1000, 3, true)),
          std::make_pair(fitted(entry, 1000, 3), fitted(entry, 1000, 3, false, 64)),
          std::make_pair(fitted(entry, 1000, 3, false, 64), fitted(entry, 1000, 3, false, 64, true))})
      if (a && b)
        for (const auto& [key, value] : a->items())
          if (value != (*b)[key]) moved.insert(key);
    std::set<std::string> marked;
    for (const models::ConfigKey& k : entry.keys)
      if (k.from_data) marked.insert(k.name);
    CHECK(moved == marked);
  }
}
