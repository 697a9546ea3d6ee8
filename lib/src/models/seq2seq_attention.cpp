#include "attn/models/seq2seq_attention.h"

#include <cmath>

#include <torch/script.h>

#include "attn/nn/attention.h"
#include "attn/nn/layers.h"
#include "attn/nn/recurrent.h"
#include "model_support.h"

namespace attn::models {
namespace seq2seq {  // this model's parts (a named namespace: the unity build compiles the models together)

const char* kEncoderDecoder = R"(
def source_embeddings(self, src: Tensor) -> Tensor:
    # src [B, S] -> the source characters' embeddings [B, S, embed_dim]
    return torch.embedding(self.source_embedding, src)

def encode_embedded(self, x: Tensor, src: Tensor) -> Tuple[Tensor, Tensor]:
    # x [B, S, embed_dim] the source's embeddings (or any point on a path to them), src [B, S]
    # post-padded (0 = padding) -> (encoder states h [B, S, 2U], mask [B, S]); a row's states do not
    # depend on the padding after it
    mask = src != 0
    h = self.encoder.forward_lengths(x, mask.sum(1))
    return h, mask

def encode(self, src: Tensor) -> Tuple[Tensor, Tensor]:
    return self.encode_embedded(self.source_embeddings(src), src)

def start(self, h: Tensor, mask: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    # s_0 = tanh(W mean_i h_i) over the real positions; cell 0; previous attentional output 0
    m = mask.unsqueeze(-1).to(h.dtype)
    mean = (h * m).sum(1) / m.sum(1).clamp(1.0)
    s = torch.tanh(self.bridge.forward(mean))
    return s, torch.zeros_like(s), torch.zeros_like(s)

def logits(self, src: Tensor, target_in: Tensor) -> Tuple[Tensor, Tensor]:
    # teacher forcing: target_in [B, T] = start token, y_1 .. y_{T-1}
    return self.logits_embedded(self.source_embeddings(src), src, target_in)

def logits_embedded(self, x: Tensor, src: Tensor, target_in: Tensor) -> Tuple[Tensor, Tensor]:
    # logits(src, target_in) from the source's embeddings x [B, S, embed_dim]: what the gradient
    # methods differentiate
    h, mask = self.encode_embedded(x, src)
    s, cell, feed = self.start(h, mask)
    outputs: List[Tensor] = []
    alphas: List[Tensor] = []
    for t in range(target_in.size(1)):
        out, s, cell, feed, alpha = self.step(target_in[:, t], s, cell, feed, h, mask)
        outputs.append(out)
        alphas.append(alpha)
    return torch.stack(outputs, 1), torch.stack(alphas, 1)

def translate(self, src: Tensor, max_length: int) -> Tuple[Tensor, Tensor]:
    # greedy decoding until every row has produced the end token (or max_length steps)
    assert max_length > 0, "translate: max_length must be positive"
    h, mask = self.encode(src)
    s, cell, feed = self.start(h, mask)
    y = torch.zeros_like(src[:, 0]) + self.start_id
    running = torch.ones_like(y)                      # 1 until the row's end token
    ids: List[Tensor] = []
    alphas: List[Tensor] = []
    for t in range(max_length):
        out, s, cell, feed, alpha = self.step(y, s, cell, feed, h, mask)
        y = out.argmax(-1) * running
        ids.append(y)
        alphas.append(alpha * running.unsqueeze(1).to(alpha.dtype))
        running = running * (y != self.end_id).to(running.dtype)
        if int(running.sum()) == 0:
            break
    return torch.stack(ids, 1), torch.stack(alphas, 1)

def beam_search(self, src: Tensor, beam: int, max_length: int) -> Tuple[Tensor, Tensor]:
    # The `beam` most probable outputs of each row, extended a character at a time; a hypothesis
    # that has produced the end token only continues with padding, at no cost. The best is the one
    # of highest mean log-probability per character (length normalisation). Returns what translate
    # returns: ids [B, T'] (the end id, then 0) and their attention [B, T', S]; beam 1 is greedy.
    assert beam > 0 and max_length > 0, "beam_search: beam and max_length must be positive"
    B = src.size(0)
    h, mask = self.encode(src)
    h = h.repeat_interleave(beam, 0)                  # [B * beam, S, 2U]: hypothesis k of row b at b * beam + k
    mask = mask.repeat_interleave(beam, 0)
    s, cell, feed = self.start(h, mask)
    y = torch.zeros([B * beam], dtype=src.dtype, device=src.device) + self.start_id
    score = torch.zeros([B, beam], device=h.device)   # total log-probability
    score[:, 1:] = -1.0e9                             # one live hypothesis per row to begin with
    length = torch.zeros([B, beam], device=h.device)  # characters, the end token included
    done = torch.zeros([B, beam], device=h.device)    # 1 once the end token is out
    first = (torch.arange(B, device=src.device) * beam).unsqueeze(1)
    tokens: List[Tensor] = []
    parents: List[Tensor] = []
    alphas: List[Tensor] = []
    for t in range(max_length):
        logits, s, cell, feed, alpha = self.step(y, s, cell, feed, h, mask)
        logp = torch.log_softmax(logits, -1)           # [B * beam, V]
        V = logp.size(1)
        padding_only = torch.full_like(logp, -1.0e9)
        padding_only[:, 0] = 0.0
        logp = torch.where(done.view(-1, 1) > 0, padding_only, logp)
        score, index = (score.view(-1, 1) + logp).view(B, beam * V).topk(beam, 1)
        parent = torch.div(index, V, rounding_mode="floor")
        token = index - parent * V
        rows = (first + parent).view(-1)               # the hypotheses extended, as rows of the last step
        s = s.index_select(0, rows)
        cell = cell.index_select(0, rows)
        feed = feed.index_select(0, rows)
        was_done = done.gather(1, parent)
        length = length.gather(1, parent) + (1.0 - was_done)
        done = torch.maximum(was_done, (token == self.end_id).to(done.dtype))
        tokens.append(token)
        parents.append(parent)
        alphas.append(alpha.index_select(0, rows) * (1.0 - was_done).view(-1, 1))
        y = token.view(-1)
        if bool(done.min() > 0):
            break
    k = (score / length.clamp(min=1.0)).argmax(1)     # each row's best hypothesis, walked back
    ids: List[Tensor] = []
    weights: List[Tensor] = []
    for t in range(len(tokens) - 1, -1, -1):
        ids.append(tokens[t].gather(1, k.unsqueeze(1)).squeeze(1))
        a = alphas[t].view(B, beam, -1)
        weights.append(a.gather(1, k.view(B, 1, 1).expand(B, 1, a.size(2))).squeeze(1))
        k = parents[t].gather(1, k.unsqueeze(1)).squeeze(1)
    ids.reverse()
    weights.reverse()
    return torch.stack(ids, 1), torch.stack(weights, 1)

def forward(self, src: Tensor) -> Tuple[Tensor, Tensor]:
    return self.translate(src, self.max_output_length)
)";

// One decoder step, in the two styles. Returns (logits [B, V], s, cell, feed, alpha [B, S]); `feed`
// is what the next step carries besides the LSTM state (Bahdanau: c_t, unused; Luong: h~_t).
const char* kBahdanauStep = R"(
def step(self, y_prev: Tensor, s: Tensor, cell: Tensor, feed: Tensor, h: Tensor,
         mask: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    context, alpha = self.attention.forward(s, h, mask)              # c_t = sum_i alpha_ti h_i, query s_{t-1}
    x = torch.cat([torch.embedding(self.target_embedding, y_prev), context], -1)
    s, cell = torch.lstm_cell(x, [s, cell], self.decoder.weight_ih, self.decoder.weight_hh,
                              self.decoder.bias_ih, self.decoder.bias_hh)   # s_t = LSTM([y_{t-1}; c_t], s_{t-1})
    return self.output.forward(torch.cat([s, context], -1)), s, cell, context, alpha
)";

const char* kLuongStep = R"(
def step(self, y_prev: Tensor, s: Tensor, cell: Tensor, feed: Tensor, h: Tensor,
         mask: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    x = torch.cat([torch.embedding(self.target_embedding, y_prev), feed], -1)
    s, cell = torch.lstm_cell(x, [s, cell], self.decoder.weight_ih, self.decoder.weight_hh,
                              self.decoder.bias_ih, self.decoder.bias_hh)   # s_t = LSTM([y_{t-1}; h~_{t-1}], s_{t-1})
    context, alpha = self.attention.forward(s, h, mask)              # c_t, query s_t
    attentional = self.combine.forward(context, s)                   # h~_t = tanh(W_c [c_t; s_t])
    return self.output.forward(attentional), s, cell, attentional, alpha
)";

bool is_luong(const nlohmann::json& c) {
  const std::string style = c.at("style");
  if (style != "bahdanau" && style != "luong")
    throw std::invalid_argument("seq2seq-attention: config key 'style' must be \"bahdanau\" or \"luong\", got \"" + style + "\"");
  return style == "luong";
}

torch::jit::Module build(const nlohmann::json& c, nn::Runtime runtime) {
  const std::int64_t src_vocab = c.at("source_vocab"), tgt_vocab = c.at("target_vocab"), embed = c.at("embed_dim"), units = c.at("units"),
                     max_src = c.at("max_source_length"), max_out = c.at("max_output_length");
  nn::require_config(src_vocab > 1 && tgt_vocab > 3 && embed > 0 && units > 0 && max_src > 0 && max_out > 0,
                     "seq2seq-attention: sizes must be positive (target_vocab counts padding, end and start)");
  const nn::Score score = nn::parse_score(c.at("score").get<std::string>());
  const bool luong = is_luong(c);
  const std::int64_t key = 2 * units, dec = 2 * units;  // decoder as wide as the keys: every score applies
  auto m = nn::script::new_module("Seq2SeqAttention");
  {
    torch::NoGradGuard no_grad;
    nn::script::add_parameter(m, "source_embedding", torch::randn({src_vocab, embed}) * 0.1);
    nn::script::add_parameter(m, "target_embedding", torch::randn({tgt_vocab, embed}) * 0.1);
  }
  m.register_module("encoder", nn::script::bilstm(embed, units, 0.0, runtime));
  m.register_module("bridge", nn::script::linear(key, dec));
  m.register_module(
      "attention",
      nn::QueryKeyAttention(
          nn::QueryKeyAttentionOptions(dec, key).score(score).attention_dim(c.at("attention_dim").get<std::int64_t>()).max_length(max_src))
          .module());
  if (luong) {
    m.register_module("decoder", nn::script::lstm_cell(embed + dec, dec));
    m.register_module("combine", nn::LuongOutput(key, dec, dec).module());
    m.register_module("output", nn::script::linear(dec, tgt_vocab));
  } else {
    m.register_module("decoder", nn::script::lstm_cell(embed + key, dec));
    m.register_module("output", nn::script::linear(dec + key, tgt_vocab));
  }
  m.register_attribute("end_id", c10::IntType::get(), tgt_vocab - 2);
  m.register_attribute("start_id", c10::IntType::get(), tgt_vocab - 1);
  m.register_attribute("max_output_length", c10::IntType::get(), max_out);
  nn::script::define(m, std::string(luong ? kLuongStep : kBahdanauStep) + kEncoderDecoder, "seq2seq-attention");
  return m;
}

std::vector<LayerRow> layers(const nlohmann::json& c) {
  const std::string e = std::to_string(c.at("embed_dim").get<std::int64_t>());
  const std::string k = std::to_string(2 * c.at("units").get<std::int64_t>());
  const std::string v = std::to_string(c.at("target_vocab").get<std::int64_t>());
  const bool luong = is_luong(c);
  std::vector<LayerRow> rows = {
      {"source_embedding", "Embedding (characters)", "(None, S, " + e + ")", "source_embedding"},
      {"encoder", "Bidirectional LSTM", "(None, S, " + k + ")", "encoder"},
      {"bridge", "Dense tanh (decoder start state)", "(None, " + k + ")", "bridge"},
      {"target_embedding", "Embedding (characters)", "(None, T, " + e + ")", "target_embedding"},
      {"attention", "attention, score " + c.at("score").get<std::string>(), "(None, T, S)", "attention"},
      {"decoder", std::string("LSTM cell (") + (luong ? "Luong, input feeding" : "Bahdanau") + ")", "(None, T, " + k + ")", "decoder"},
  };
  if (luong) rows.push_back({"combine", "Dense tanh (h~ = tanh(W_c [c; s]))", "(None, T, " + k + ")", "combine"});
  rows.push_back({"output", "Dense (softmax over characters)", "(None, T, " + v + ")", "output"});
  return rows;
}

/// The data fixes both vocabularies; the location score needs a weight per source position, and
/// greedy decoding a cap above the longest target.
void fit(nlohmann::json& c, const nlohmann::json& given, const DataSizes& data) {
  fit_exact(c, given, "source_vocab", data.vocabulary);
  fit_exact(c, given, "target_vocab", data.target_vocabulary);
  fit_at_least(c, given, "max_source_length", data.input_length, std::max<std::int64_t>(64, data.input_length));
  fit_at_least(c, given, "max_output_length", data.output_length, data.output_length + 10);
}

}  // namespace seq2seq

ModelEntry seq2seq_attention_entry() {
  return ModelEntry{
      "seq2seq-attention",
      ModelKind::kSeq2Seq,
      "Seeds 002/003: character-level encoder-decoder (BiLSTM encoder, LSTM decoder) with Bahdanau- or "
      "Luong-style attention and a selectable score; greedy decoding (e.g. human-readable dates -> ISO dates)",
      {
          {"source_vocab", 64, "source characters + padding + OOV (set from the source tokenizer)", true},
          {"target_vocab", 16, "target characters + padding, end and start (set from the target tokenizer)", true},
          {"embed_dim", 32, "character embedding size"},
          {"units", 64, "encoder LSTM units per direction; the decoder has 2 x this"},
          {"score", "additive", "alignment score: additive, general, dot, scaled-dot, cosine, location"},
          {"style", "bahdanau", "bahdanau (context feeds the decoder input) or luong (h~ = tanh(W_c [c; s]) feeds the output)"},
          {"attention_dim", 0, "additive score: hidden size (0: 2 x units)"},
          {"max_source_length", 64, "location score: longest source in characters (set from the data, at least 64)", true},
          {"max_output_length", 32, "greedy decoding stops after this many characters (set from the data)", true},
      },
      // Seed 002 gives no recipe; these reach >= 99% exact match on 20,000 generated dates (the
      // default of attn datagen dates) in about two minutes (docs/seeds.md, "Seed 002").
      {{"epochs", 10}, {"batch_size", 64}, {"lr", 1e-3}, {"val_split", 0.2}},
      seq2seq::build,
      seq2seq::fit,
      seq2seq::layers,
  };
}

}  // namespace attn::models
