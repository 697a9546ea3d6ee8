#include "attn/models/ensemble.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <torch/script.h>

#include "attn/nn/script_module.h"
#include "model_support.h"

namespace attn::models {
namespace {

std::string member(int i) { return "member" + std::to_string(i); }

/// `line` once per member, "@" standing for the member's index (z@, a@, self.member@).
std::string per_member(int members, const std::string& line) {
  std::string out;
  for (int i = 0; i < members; ++i) {
    std::string l = line;
    for (std::size_t at = l.find('@'); at != std::string::npos; at = l.find('@', at)) l.replace(at, 1, std::to_string(i));
    out += l;
  }
  return out;
}

/// "z0, z1, ..." ("@" as above).
std::string listed(int members, const std::string& item) {
  std::string out = per_member(members, item + ", ");
  return out.substr(0, out.size() - 2);
}

std::string mean_logits_source(const nlohmann::json& config, int members) {
  char log_members[64];
  std::snprintf(log_members, sizeof log_members, "%.17g", std::log(static_cast<double>(members)));
  if (config.value("output", std::string("sigmoid")) == "softmax")
    return std::string(R"(
def mean_logits(self, z: Tensor) -> Tensor:
    # the members' logits z [N, B, K] -> log((1/N) sum_n softmax(z_n)): its softmax is the members' mean
    return torch.logsumexp(torch.log_softmax(z, 2), 0) - )") +
           log_members + R"( + self.ensemble_bias
)";
  return R"(
def mean_logits(self, z: Tensor) -> Tensor:
    # the members' logits z [N, B, L] -> the log-odds of p = (1/N) sum_n sigmoid(z_n):
    # log(sum_n sigmoid(z_n)) - log(sum_n sigmoid(-z_n)), from log sigmoid(z) = -(max(-z, 0) + log(1 + e^-|z|))
    soft = torch.log1p(torch.exp(-torch.abs(z)))
    log_p = -(torch.relu(-z) + soft)
    log_q = -(torch.relu(z) + soft)
    return torch.logsumexp(log_p, 0) - torch.logsumexp(log_q, 0) + self.ensemble_bias
)";
}

/// The methods every text classifier has, over the members.
std::string source(int n) {
  const std::string N = std::to_string(n);
  return R"(
def member_logits(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # each member's (logits, attention), stacked: [N, B, labels], [N, B, T]
)" + per_member(n, "    z@, a@ = self.member@.logits(ids)\n") +
         "    return torch.stack([" + listed(n, "z@") + "]), torch.stack([" + listed(n, "a@") + R"(])

def logits(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    z, a = self.member_logits(ids)
    return self.mean_logits(z), a.mean(0)

def forward(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
    logits, attention = self.logits(ids)
    return self.probabilities(logits), attention

def embeddings(self, ids: Tensor) -> Tensor:
    # the members' embeddings side by side [B, T, N x D]
    return torch.cat([)" +
         listed(n, "self.member@.embeddings(ids)") + R"(], -1)

def logits_embedded(self, x: Tensor, ids: Tensor) -> Tuple[Tensor, Tensor]:
    # x [B, T, N x D]: each member reads its own part (as embeddings() gives them)
    xs = x.chunk()" +
         N + R"(, -1)
)" + per_member(n, "    z@, a@ = self.member@.logits_embedded(xs[@], ids)\n") +
         "    z = torch.stack([" + listed(n, "z@") + "])\n    a = torch.stack([" + listed(n, "a@") + R"(])
    return self.mean_logits(z), a.mean(0)
)";
}

/// Span taggers: per token, the log-odds of the members' mean probability (mean_logits), and that
/// probability, 0 at padding.
std::string tagger_source(int n) {
  return R"(
def member_logits(self, ids: Tensor) -> Tensor:
    # each member's per-token logits, stacked: [N, B, T]
    return torch.stack([)" +
         listed(n, "self.member@.logits(ids)") + R"(])

def logits(self, ids: Tensor) -> Tensor:
    return self.mean_logits(self.member_logits(ids))

def forward(self, ids: Tensor) -> Tensor:
    logits = self.logits(ids)
    return torch.sigmoid(logits) * self.member0.token_mask(ids).to(logits.dtype)
)";
}

/// Hierarchical models: both levels of weights, each the members' mean.
std::string attention_levels_source(int n) {
  return R"(
def attention_levels(self, ids: Tensor) -> Tuple[Tensor, Tensor]:
)" + per_member(n, "    w@, s@ = self.member@.attention_levels(ids)\n") +
         "    return torch.stack([" + listed(n, "w@") + "]).mean(0), torch.stack([" + listed(n, "s@") + R"(]).mean(0)
)";
}

/// Models with subwords: Python's helpers for the n-gram ids (every member hashes alike).
const char* kSubwordHelpers = R"(
def subword_rows(self, word: str) -> List[int]:
    return self.member0.subword_rows(word)

def subword_ids(self, words: List[str], word_rows: List[int]) -> Tensor:
    return self.member0.subword_ids(words, word_rows)
)";

}  // namespace

void check_ensemble(const ModelEntry& entry, int members) {
  if (members < 1) throw std::invalid_argument("--ensemble must be >= 1, got " + std::to_string(members));
  if (members > 1 && entry.kind != ModelKind::kTextClassifier && entry.kind != ModelKind::kSpanTagger)
    throw std::invalid_argument("--ensemble: " + entry.name + " is not a text classifier or a span tagger (what an ensemble averages)");
  if (members > 1 && !entry.ensembles)
    throw std::invalid_argument("--ensemble: " + entry.name + " cannot be ensembled (its registry entry says why)");
}

torch::jit::Module build_model(const ModelEntry& entry, const nlohmann::json& config, int members, nn::Runtime runtime) {
  check_ensemble(entry, members);
  if (members == 1) return entry.build(config, runtime);
  torch::jit::Module m = nn::script::new_module("Ensemble");
  torch::jit::Module first;
  for (int i = 0; i < members; ++i) {
    torch::jit::Module built = entry.build(config, runtime);  // its own initial weights: the random stream moves on
    if (i == 0) first = built;
    m.register_module(member(i), built);
  }
  m.register_buffer(kEnsembleBias, torch::zeros({config.value("labels", std::int64_t{1})}));  // (a tagger's one output)
  nn::script::define(m, mean_logits_source(config, members), "ensemble");
  if (entry.kind == ModelKind::kSpanTagger) {
    nn::script::define(m, tagger_source(members), "ensemble");
  } else {
    define_output(m, config, "ensemble of " + entry.name);
    nn::script::define(m, source(members), "ensemble");
  }
  if (first.find_method("attention_levels")) nn::script::define(m, attention_levels_source(members), "ensemble");
  if (first.find_method("subword_ids")) nn::script::define(m, kSubwordHelpers, "ensemble");
  return m;
}

std::vector<torch::jit::Module> ensemble_members(const torch::jit::Module& model) {
  if (!model.find_method("member_logits")) return {model};
  std::vector<torch::jit::Module> out;
  for (int i = 0; model.hasattr(member(i)); ++i) out.emplace_back(model.attr(member(i)).toObject());
  return out;
}

torch::Tensor output_bias(const ModelEntry& entry, const torch::jit::Module& model) {
  if (model.find_method("member_logits")) return model.attr(kEnsembleBias).toTensor();
  for (const auto& p : model.named_parameters(/*recurse=*/true))
    if (!entry.output_bias.empty() && p.name == entry.output_bias) return p.value;
  return {};
}

int ensemble_size(const nlohmann::json& run_config) {
  const auto training = run_config.find("training");
  if (training == run_config.end() || !training->is_object() || !training->contains("ensemble")) return 1;
  const nlohmann::json& n = training->at("ensemble");
  if (!n.is_number_integer() || n.get<std::int64_t>() < 1 || n.get<std::int64_t>() > 64)
    throw std::runtime_error("config.json: training.ensemble must be a whole number of members (1 to 64), got " + n.dump());
  return n.get<int>();
}

}  // namespace attn::models
