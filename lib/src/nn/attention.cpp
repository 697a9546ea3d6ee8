// Every attention equation of attn, as TorchScript source next to the C++ that builds the module.
// Each source reads like the paper; shapes in the comments use B batch, T steps, D features.
#include "attn/nn/attention.h"

#include <cmath>
#include <stdexcept>

#include <torch/script.h>

#include "attn/nn/fused_attention.h"
#include "attn/nn/layers.h"

namespace attn::nn {

// ---- Word attention (Yang et al. 2016) ------------------------------------------------------

static const char* kWordAttention = R"(
def forward(self, h: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    # h [B, T, D]; mask [B, T]
    u = torch.tanh(self.mlp.forward(h))                  # u_t = tanh(W h_t + b)       [B, T, D]
    scores = self.context.forward(u).squeeze(-1)         # v^T u_t                      [B, T]
    alpha = self.masked_softmax(scores, mask)            # alpha = softmax_t(v^T u_t)   [B, T]
    weighted = h * alpha.unsqueeze(-1)                   # alpha_t h_t                  [B, T, D]
    if self.combine:
        return weighted.sum(1), alpha                    # s = sum_t alpha_t h_t        [B, D]
    return weighted, alpha
)";

// The same equations as one kernel of attn's (fused_attention.h): native builds that combine only
// (nn::Runtime).
static bool native(const WordAttentionOptions& o) { return o.runtime() == Runtime::kNative && o.combine(); }
static const char* kWordAttentionNative = R"(
def forward(self, h: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    return attn.word_attention(h, mask, self.mlp.weight, self.mlp.bias, self.context.weight, self.context.bias)
)";

WordAttention::WordAttention(const WordAttentionOptions& options)
    : ScriptModule(script::new_module(native(options) ? "WordAttentionNative" : "WordAttention")) {
  require_config(options.dim() > 0, c10::str("WordAttention: dim must be positive, got ", options.dim()));
  module_.register_module("mlp", script::linear(options.dim(), options.dim()));
  module_.register_module("context", script::linear(options.dim(), 1));
  module_.register_attribute("combine", c10::BoolType::get(), options.combine());
  if (native(options)) {
    register_fused_attention();
    script::define(module_, kWordAttentionNative, "WordAttention (native)");
  } else {
    script::define(module_, kWordAttention, "WordAttention", /*masked_softmax=*/true);
  }
}

// ---- Feature attention (seed 001) -----------------------------------------------------------

static const char* kFeatureAttention = R"(
def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    # x [B, D]; mask [B, D]
    alpha = self.masked_softmax(self.attention.forward(x), mask)   # alpha = softmax(W x + b)  [B, D]
    return alpha * x, alpha                                        # alpha (.) x               [B, D]
)";

FeatureAttention::FeatureAttention(std::int64_t features) : ScriptModule(script::new_module("FeatureAttention")) {
  require_config(features > 0, c10::str("FeatureAttention: features must be positive, got ", features));
  module_.register_module("attention", script::linear(features, features));
  script::define(module_, kFeatureAttention, "FeatureAttention", true);
}

// ---- Query-key attention with a selectable score -------------------------------------------

namespace {

struct ScoreInfo {
  Score score;
  const char* name;
  const char* class_name;  // of the TorchScript module
  const char* source;      // def score(self, q [B, Tq, Dq], k [B, Tk, Dk]) -> [B, Tq, Tk]
};

const ScoreInfo kScores[] = {
    {Score::kAdditive, "additive", "QueryKeyAttentionAdditive", R"(
def score(self, q: Tensor, k: Tensor) -> Tensor:
    # Bahdanau: v^T tanh(W q + U k)
    hidden = torch.tanh(self.query_proj.forward(q).unsqueeze(2) + self.key_proj.forward(k).unsqueeze(1))
    return self.v.forward(hidden).squeeze(-1)
)"},
    {Score::kGeneral, "general", "QueryKeyAttentionGeneral", R"(
def score(self, q: Tensor, k: Tensor) -> Tensor:
    # Luong general: q^T W k
    return torch.bmm(q, self.W.forward(k).transpose(1, 2))
)"},
    {Score::kDot, "dot", "QueryKeyAttentionDot", R"(
def score(self, q: Tensor, k: Tensor) -> Tensor:
    # Luong dot: q^T k
    return torch.bmm(q, k.transpose(1, 2))
)"},
    {Score::kScaledDot, "scaled-dot", "QueryKeyAttentionScaledDot", R"(
def score(self, q: Tensor, k: Tensor) -> Tensor:
    # Vaswani: q^T k / sqrt(d)
    return torch.bmm(q, k.transpose(1, 2)) / self.sqrt_d
)"},
    {Score::kCosine, "cosine", "QueryKeyAttentionCosine", R"(
def score(self, q: Tensor, k: Tensor) -> Tensor:
    # Graves, content-based: cosine[q, k]
    return torch.cosine_similarity(q.unsqueeze(2), k.unsqueeze(1), -1, 1e-8)
)"},
    {Score::kLocation, "location", "QueryKeyAttentionLocation", R"(
def score(self, q: Tensor, k: Tensor) -> Tensor:
    # Luong location-based: W q, one score per position, whatever the keys hold
    assert k.size(1) <= self.max_length, "QueryKeyAttention(location): more keys than max_length"
    return self.location.forward(q)[:, :, :k.size(1)]
)"},
};

const ScoreInfo& info(Score s) {
  for (const ScoreInfo& i : kScores)
    if (i.score == s) return i;
  throw std::invalid_argument("unknown Score value");
}

}  // namespace

Score parse_score(std::string_view name) {
  std::string valid;
  for (const ScoreInfo& i : kScores) {
    if (name == i.name) return i.score;
    valid += (valid.empty() ? "" : ", ") + std::string(i.name);
  }
  throw std::invalid_argument("unknown attention score '" + std::string(name) + "' (valid: " + valid + ")");
}

const char* score_name(Score score) { return info(score).name; }

static const char* kQueryKeyAttention = R"(
def forward(self, query: Tensor, keys: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    # query [B, Dq] or [B, Tq, Dq]; keys [B, Tk, Dk]; mask [B, Tk]
    one_step = query.dim() == 2
    q = query.unsqueeze(1) if one_step else query        # [B, Tq, Dq]
    m = mask
    if m is not None:
        m = m.unsqueeze(1)                               # [B, 1, Tk]
    alpha = self.masked_softmax(self.score(q, keys), m)  # alpha = softmax_i(score(q, k_i))  [B, Tq, Tk]
    context = torch.bmm(alpha, keys)                     # c = sum_i alpha_i k_i             [B, Tq, Dk]
    if one_step:
        return context.squeeze(1), alpha.squeeze(1)
    return context, alpha
)";

QueryKeyAttention::QueryKeyAttention(const QueryKeyAttentionOptions& o) : ScriptModule(script::new_module(info(o.score()).class_name)) {
  require_config(o.query_dim() > 0 && o.key_dim() > 0, "QueryKeyAttention: dimensions must be positive");
  module_.register_attribute("score_name", c10::StringType::get(), std::string(info(o.score()).name));
  switch (o.score()) {
    case Score::kAdditive: {
      const std::int64_t a = o.attention_dim() > 0 ? o.attention_dim() : o.key_dim();
      module_.register_module("query_proj", script::linear(o.query_dim(), a, false));
      module_.register_module("key_proj", script::linear(o.key_dim(), a, false));
      module_.register_module("v", script::linear(a, 1, false));
      break;
    }
    case Score::kGeneral:
      module_.register_module("W", script::linear(o.key_dim(), o.query_dim(), false));
      break;
    case Score::kDot:
    case Score::kScaledDot:
      require_config(o.query_dim() == o.key_dim(),
                     c10::str("QueryKeyAttention(", info(o.score()).name, "): query_dim and key_dim must be equal, got ", o.query_dim(),
                              " and ", o.key_dim()));
      module_.register_attribute("sqrt_d", c10::FloatType::get(), std::sqrt(static_cast<double>(o.key_dim())));
      break;
    case Score::kCosine:
      break;
    case Score::kLocation:
      require_config(o.max_length() > 0, "QueryKeyAttention(location): max_length must be positive");
      module_.register_module("location", script::linear(o.query_dim(), o.max_length(), false));
      module_.register_attribute("max_length", c10::IntType::get(), o.max_length());
      break;
  }
  script::define(module_, std::string(info(o.score()).source) + kQueryKeyAttention, "QueryKeyAttention", true);
}

// ---- Luong attentional output ---------------------------------------------------------------

static const char* kLuongOutput = R"(
def forward(self, context: Tensor, query: Tensor) -> Tensor:
    return torch.tanh(self.combine.forward(torch.cat([context, query], -1)))   # h~ = tanh(W_c [c; q])
)";

LuongOutput::LuongOutput(std::int64_t context_dim, std::int64_t query_dim, std::int64_t out_dim)
    : ScriptModule(script::new_module("LuongOutput")) {
  module_.register_module("combine", script::linear(context_dim + query_dim, out_dim, false));
  script::define(module_, kLuongOutput, "LuongOutput");
}

// ---- Scaled dot-product and multi-head attention (Vaswani et al. 2017) ----------------------

static const char* kScaledDotProduct = R"(
def forward(self, q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    # q [.., Tq, d]; k [.., Tk, d]; v [.., Tk, dv]; mask broadcasts to [.., Tq, Tk]
    scores = torch.matmul(q, k.transpose(-2, -1)) / float(q.size(-1)) ** 0.5   # Q K^T / sqrt(d_k)
    weights = self.masked_softmax(scores, mask)
    weights = torch.dropout(weights, self.dropout, self.training)
    return torch.matmul(weights, v), weights                                     # softmax(..) V
)";

static const char* kMultiHead = R"(
def forward(self, query: Tensor, key: Tensor, value: Tensor, key_mask: Optional[Tensor] = None,
            causal: bool = False) -> Tuple[Tensor, Tensor]:
    # query [B, Tq, E]; key, value [B, Tk, E]; key_mask [B, Tk]
    b = query.size(0)
    tq = query.size(1)
    tk = key.size(1)
    # head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), all heads at once: [B, heads, T, head_dim]
    q = self.q_proj.forward(query).view(b, tq, self.num_heads, self.head_dim).transpose(1, 2)
    k = self.k_proj.forward(key).view(b, tk, self.num_heads, self.head_dim).transpose(1, 2)
    v = self.v_proj.forward(value).view(b, tk, self.num_heads, self.head_dim).transpose(1, 2)
    mask: Optional[Tensor] = None
    if key_mask is not None:
        mask = (key_mask != 0).view(b, 1, 1, tk)
    if causal:
        allowed = torch.ones([tq, tk], device=query.device).tril() != 0
        if mask is None:
            mask = allowed
        else:
            mask = mask & allowed
    out, weights = self.attention.forward(q, k, v, mask)
    out = out.transpose(1, 2).reshape(b, tq, self.num_heads * self.head_dim)   # Concat(head_1..h)
    return self.out_proj.forward(out), weights                                   # .. W^O
)";

namespace script {

torch::jit::Module scaled_dot_product_attention(double dropout) {
  require_config(dropout >= 0 && dropout < 1, c10::str("ScaledDotProductAttention: dropout must be in [0, 1), got ", dropout));
  auto m = new_module("ScaledDotProductAttention");
  m.register_attribute("dropout", c10::FloatType::get(), dropout);
  define(m, kScaledDotProduct, "ScaledDotProductAttention", true);
  return m;
}

torch::jit::Module multi_head_attention(const MultiHeadAttentionOptions& o) {
  require_config(
      o.embed_dim() > 0 && o.num_heads() > 0 && o.embed_dim() % o.num_heads() == 0,
      c10::str("MultiHeadAttention: embed_dim (", o.embed_dim(), ") must be a positive multiple of num_heads (", o.num_heads(), ")"));
  auto m = new_module("MultiHeadAttention");
  for (const char* name : {"q_proj", "k_proj", "v_proj", "out_proj"}) m.register_module(name, linear(o.embed_dim(), o.embed_dim()));
  m.register_module("attention", scaled_dot_product_attention(o.dropout()));
  m.register_attribute("num_heads", c10::IntType::get(), o.num_heads());
  m.register_attribute("head_dim", c10::IntType::get(), o.embed_dim() / o.num_heads());
  define(m, kMultiHead, "MultiHeadAttention");
  return m;
}

}  // namespace script

ScaledDotProductAttention::ScaledDotProductAttention(double dropout) : ScriptModule(script::scaled_dot_product_attention(dropout)) {}

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& options) : ScriptModule(script::multi_head_attention(options)) {}

}  // namespace attn::nn
