#include "attn/models/explain.h"

#include <stdexcept>

#include <torch/torch.h>

namespace attn::models {
namespace {

/// The text's chunks between the default separators (space, tab, newline).
std::vector<std::string> chunks_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace

Explanation explain(SavedModel& model, const std::string& text) {
  const text::Tokenizer& tok = model.tokenizer;
  Explanation e;
  e.text = text;
  e.label_names = model.config.at("data").at("labels").get<std::vector<std::string>>();
  const std::vector<text::Sequence> seq = tok.texts_to_sequences({text});
  e.ids.assign(seq[0].begin(), seq[0].end());

  torch::NoGradGuard no_grad;
  const torch::Tensor ids = e.ids.empty() ? torch::zeros({1, 1}, torch::kInt64)
                                          : torch::tensor(e.ids, torch::kInt64).unsqueeze(0);
  const auto out = model.module.forward({ids}).toTuple();
  const torch::Tensor probs = out->elements()[0].toTensor().to(torch::kFloat32).contiguous();
  const torch::Tensor att = out->elements()[1].toTensor().to(torch::kFloat32).contiguous();
  e.probabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
  if (!e.ids.empty()) e.attention.assign(att.data_ptr<float>(), att.data_ptr<float>() + att.numel());

  // Words: each chunk's tokens, which (with the default separators) are the text's tokens in order.
  const auto num_words = tok.options().num_words.value_or(0);
  std::vector<std::string> all_tokens = tok.tokenize(text);
  std::vector<std::vector<std::string>> per_chunk;
  std::vector<std::string> chunks = chunks_of(text);
  std::vector<std::string> joined;
  for (const std::string& c : chunks) {
    per_chunk.push_back(tok.tokenize(c));
    joined.insert(joined.end(), per_chunk.back().begin(), per_chunk.back().end());
  }
  if (joined != all_tokens) {  // other separators: one word per token
    chunks = all_tokens;
    per_chunk.clear();
    for (const std::string& t : all_tokens) per_chunk.push_back({t});
  }
  std::size_t next_id = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    ExplainedWord w;
    w.word = chunks[i];
    w.tokens = per_chunk[i];
    if (w.tokens.empty()) {
      w.status = "filtered";
      w.reason = "only filtered characters";
    }
    for (const std::string& t : w.tokens) {
      const auto index = tok.word_index(t);
      const bool in_range = index && (num_words == 0 || *index < num_words);
      std::string status = in_range ? "kept" : tok.options().oov_token ? "oov" : "dropped";
      if (status != "dropped") {
        if (next_id >= e.ids.size()) throw std::logic_error("explain: tokens and ids do not line up");
        w.weight += e.attention[next_id++];
      } else {
        w.reason = index ? "beyond num_words" : "unknown word";
      }
      // A word is kept if any of its tokens is; otherwise it takes its tokens' status.
      if (w.status.empty() || status == "kept" || (status == "oov" && w.status == "dropped")) w.status = status;
    }
    if (w.status == "kept" || w.status == "oov") w.reason.clear();
    e.words.push_back(std::move(w));
  }
  if (next_id != e.ids.size()) throw std::logic_error("explain: tokens and ids do not line up");
  return e;
}

}  // namespace attn::models
