// The Transformer's layers (Vaswani et al. 2017) as TorchScript source, next to their builders.
#include "attn/nn/transformer.h"

#include <cmath>

#include <torch/script.h>

#include "attn/nn/layers.h"

namespace attn::nn {

static const char* kPositionalEncoding = R"(
def forward(self, x: Tensor) -> Tensor:
    # x [B, T, D] + PE[:T]
    return x + self.pe[: x.size(1)].to(x.dtype)
)";

// The feed-forward network and the two ways of wrapping a sublayer, shared by both layers.
static const char* kFeedForward = R"(
def feed_forward(self, x: Tensor) -> Tensor:
    # FFN(x) = W_2 dropout(relu(W_1 x + b_1)) + b_2
    hidden = torch.dropout(torch.relu(self.linear1.forward(x)), self.dropout, self.training)
    return self.linear2.forward(hidden)

def drop(self, x: Tensor) -> Tensor:
    return torch.dropout(x, self.dropout, self.training)
)";

static const char* kEncoderLayer = R"(
def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    # x [B, T, E]; mask [B, T]
    if self.norm_first:
        h = self.norm1.forward(x)
        a, weights = self.self_attn.forward(h, h, h, mask, False)
        x = x + self.drop(a)
        x = x + self.drop(self.feed_forward(self.norm2.forward(x)))
    else:
        a, weights = self.self_attn.forward(x, x, x, mask, False)
        x = self.norm1.forward(x + self.drop(a))                       # LayerNorm(x + SelfAttention(x))
        x = self.norm2.forward(x + self.drop(self.feed_forward(x)))    # LayerNorm(x + FFN(x))
    return x, weights
)";

static const char* kDecoderLayer = R"(
def forward(self, x: Tensor, memory: Tensor, x_mask: Optional[Tensor] = None,
            memory_mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor, Tensor]:
    # x [B, T, E]; memory [B, S, E]; x_mask [B, T]; memory_mask [B, S]
    if self.norm_first:
        h = self.norm1.forward(x)
        a, self_weights = self.self_attn.forward(h, h, h, x_mask, True)
        x = x + self.drop(a)
        h = self.norm2.forward(x)
        c, cross_weights = self.cross_attn.forward(h, memory, memory, memory_mask, False)
        x = x + self.drop(c)
        x = x + self.drop(self.feed_forward(self.norm3.forward(x)))
    else:
        a, self_weights = self.self_attn.forward(x, x, x, x_mask, True)           # masked (causal) self-attention
        x = self.norm1.forward(x + self.drop(a))
        c, cross_weights = self.cross_attn.forward(x, memory, memory, memory_mask, False)  # encoder-decoder attention
        x = self.norm2.forward(x + self.drop(c))
        x = self.norm3.forward(x + self.drop(self.feed_forward(x)))
    return x, self_weights, cross_weights
)";

namespace script {

torch::jit::Module positional_encoding(std::int64_t dim, std::int64_t max_length) {
  require_config(dim > 0 && max_length > 0, "PositionalEncoding: dim and max_length must be positive");
  auto m = new_module("PositionalEncoding");
  torch::Tensor pe = torch::zeros({max_length, dim});
  const torch::Tensor pos = torch::arange(max_length, torch::kFloat64).unsqueeze(1);
  const torch::Tensor i2 = torch::arange(0, dim, 2, torch::kFloat64);
  const torch::Tensor angle = pos / torch::pow(10000.0, i2 / static_cast<double>(dim));  // pos / 10000^(2i/D)
  pe.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, torch::indexing::None, 2)}, torch::sin(angle).to(torch::kFloat32));
  pe.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, torch::indexing::None, 2)},
                torch::cos(angle).slice(1, 0, dim / 2).to(torch::kFloat32));
  m.register_buffer("pe", pe);
  define(m, kPositionalEncoding, "PositionalEncoding");
  return m;
}

namespace {

torch::jit::Module layer_base(const char* name, const TransformerLayerOptions& o, int norms) {
  require_config(o.dropout() >= 0 && o.dropout() < 1, c10::str(name, ": dropout must be in [0, 1)"));
  auto m = new_module(name);
  const MultiHeadAttentionOptions mha = MultiHeadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout());
  m.register_module("self_attn", multi_head_attention(mha));
  if (norms == 3) m.register_module("cross_attn", multi_head_attention(mha));
  m.register_module("linear1", linear(o.d_model(), o.dim_feedforward()));
  m.register_module("linear2", linear(o.dim_feedforward(), o.d_model()));
  for (int i = 1; i <= norms; ++i) m.register_module("norm" + std::to_string(i), layer_norm(o.d_model(), o.layer_norm_eps()));
  m.register_attribute("dropout", c10::FloatType::get(), o.dropout());
  m.register_attribute("norm_first", c10::BoolType::get(), o.norm_first());
  return m;
}

}  // namespace

torch::jit::Module transformer_encoder_layer(const TransformerLayerOptions& o) {
  auto m = layer_base("TransformerEncoderLayer", o, 2);
  define(m, std::string(kFeedForward) + kEncoderLayer, "TransformerEncoderLayer");
  return m;
}

torch::jit::Module transformer_decoder_layer(const TransformerLayerOptions& o) {
  auto m = layer_base("TransformerDecoderLayer", o, 3);
  define(m, std::string(kFeedForward) + kDecoderLayer, "TransformerDecoderLayer");
  return m;
}

}  // namespace script

PositionalEncoding::PositionalEncoding(std::int64_t dim, std::int64_t max_length)
    : ScriptModule(script::positional_encoding(dim, max_length)) {}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerOptions& options)
    : ScriptModule(script::transformer_encoder_layer(options)) {}

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerOptions& options)
    : ScriptModule(script::transformer_decoder_layer(options)) {}

std::tuple<Tensor, Tensor, Tensor> TransformerDecoderLayer::forward(const Tensor& x, const Tensor& memory, const OptionalTensor& x_mask,
                                                                    const OptionalTensor& memory_mask) const {
  const auto t = call({x, memory, ivalue(x_mask), ivalue(memory_mask)}).toTuple();
  return {t->elements()[0].toTensor(), t->elements()[1].toTensor(), t->elements()[2].toTensor()};
}

}  // namespace attn::nn
