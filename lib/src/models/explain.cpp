#include "attn/models/explain.h"

#include <stdexcept>

#include <torch/torch.h>

#include "attn/train/task.h"

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
  const text::Tokenizer& tok = model.require_tokenizer();
  Explanation e;
  e.text = text;
  e.label_names = model.config.at("data").at("labels").get<std::vector<std::string>>();
  const std::vector<text::Sequence> seq = tok.texts_to_sequences({text});
  // Cut to maxlen as the training data was (Keras' truncating 'pre' keeps a long text's end).
  const nlohmann::json& data = model.config.at("data");
  const auto maxlen = static_cast<std::size_t>(data.value("maxlen", std::int64_t{0}));
  const auto all = seq[0].size();
  std::size_t cut_front = 0, cut_back = 0;
  if (maxlen > 0 && all > maxlen)
    (text::parse_side(data.value("truncating", "pre"), "truncating") == text::Side::kPre ? cut_front : cut_back) = all - maxlen;
  e.ids.assign(seq[0].begin() + static_cast<std::ptrdiff_t>(cut_front), seq[0].end() - static_cast<std::ptrdiff_t>(cut_back));

  torch::NoGradGuard no_grad;
  const torch::Tensor ids = e.ids.empty() ? torch::zeros({1, 1}, torch::kInt64)
                                          : torch::tensor(e.ids, torch::kInt64).unsqueeze(0);
  const auto out = model.module.forward({ids}).toTuple();
  const torch::Tensor probs = out->elements()[0].toTensor().to(torch::kFloat32).contiguous();
  const torch::Tensor att = out->elements()[1].toTensor().to(torch::kFloat32).contiguous();
  e.probabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
  if (!e.ids.empty()) e.attention.assign(att.data_ptr<float>(), att.data_ptr<float>() + att.numel());
  if (!e.ids.empty() && model.module.find_method("self_attention")) {
    const auto layers = model.module.get_method("self_attention")({ids}).toTensorList();
    for (const torch::Tensor& layer : layers) {
      const torch::Tensor w = layer.to(torch::kFloat32).contiguous();  // [1, heads, T, T]
      std::vector<std::vector<float>> heads;
      for (std::int64_t h = 0; h < w.size(1); ++h) {
        const torch::Tensor head = w[0][h].contiguous();
        heads.emplace_back(head.data_ptr<float>(), head.data_ptr<float>() + head.numel());
      }
      e.self_attention.push_back(std::move(heads));
    }
  }

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
        if (next_id >= all) throw std::logic_error("explain: tokens and ids do not line up");
        if (next_id < cut_front || next_id >= all - cut_back) {
          status = "dropped";
          w.reason = "beyond maxlen " + std::to_string(maxlen) + " (truncated as in training)";
        } else {
          w.weight += e.attention[next_id - cut_front];
        }
        ++next_id;
      } else {
        w.reason = index ? "beyond num_words" : "unknown word";
      }
      // A word is kept if any of its tokens is; otherwise it takes its tokens' status.
      if (w.status.empty() || status == "kept" || (status == "oov" && w.status == "dropped")) w.status = status;
    }
    if (w.status == "kept" || w.status == "oov") w.reason.clear();
    e.words.push_back(std::move(w));
  }
  if (next_id != all) throw std::logic_error("explain: tokens and ids do not line up");
  return e;
}

std::vector<FeatureExplanation> explain_features(SavedModel& model, const std::vector<float>& values) {
  const auto names = model.config.at("data").at("features").get<std::vector<std::string>>();
  const auto d = static_cast<std::int64_t>(names.size());
  if (d == 0 || values.size() % static_cast<std::size_t>(d) != 0)
    throw std::invalid_argument("a row needs " + std::to_string(d) + " feature values");
  const auto [probs, attention] = train::predict_features(model.module, values, d);
  std::vector<FeatureExplanation> out;
  for (std::size_t r = 0; r < probs.size(); ++r) {
    FeatureExplanation e;
    e.feature_names = names;
    e.label_name = model.config.at("data").value("label", std::string("label"));
    e.values.assign(values.begin() + static_cast<std::ptrdiff_t>(r) * d, values.begin() + static_cast<std::ptrdiff_t>(r + 1) * d);
    e.probability = probs[r];
    e.attention.assign(attention.begin() + static_cast<std::ptrdiff_t>(r) * d,
                       attention.begin() + static_cast<std::ptrdiff_t>(r + 1) * d);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<TranslationExplanation> explain_translations(SavedModel& model, const std::vector<std::string>& texts) {
  const text::Tokenizer& source = model.require_tokenizer();
  const text::Tokenizer& target = model.require_target_tokenizer();
  data::PairTable pairs;
  pairs.sources = texts;
  const train::SequencePairs enc = train::encode_pairs(pairs, source, target);
  std::vector<std::int64_t> rows;
  for (std::size_t i = 0; i < texts.size(); ++i) rows.push_back(static_cast<std::int64_t>(i));
  const std::vector<train::Translation> out = train::translate(model.module, enc.source, rows, enc.end_id, 64);
  std::vector<TranslationExplanation> all;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    TranslationExplanation e;
    e.source = texts[i];
    for (std::int64_t c = 0; c < enc.source.lengths[i]; ++c)
      e.source_tokens.push_back(source.index_word(enc.source.ids[static_cast<std::size_t>(static_cast<std::int64_t>(i) * enc.source.cols + c)])
                                    .value_or("?"));
    for (std::int32_t id : out[i].ids) e.output_tokens.push_back(target.index_word(id).value_or("?"));
    e.output = train::decode(target, out[i].ids);
    e.attention = out[i].attention;
    all.push_back(std::move(e));
  }
  return all;
}

}  // namespace attn::models
