// Text classifiers' explanations (see text_explanation.h).
#include "text_explanation.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <torch/script.h>

#include "attn/nn/script_module.h"
#include "attn/parallel/threads.h"
#include "attn/text/dataset.h"
#include "task_support.h"
#include "text_dataset.h"

namespace attn::tasks {
namespace {

/// The scores of options.methods for one bucket of rows (the driver's adapter): ids [B, W] as
/// batch_ids gives them, row i's real ids at out[i]->ids and its attention already in out[i], a
/// transformer's self-attention `layers` (each [B, heads, W, W]) when it has it. A unit is a token,
/// a target a label, the baseline zero embeddings (the mask unchanged), a removed token one the
/// padded text does not have. With options.shown_label_only each row is explained for its
/// shown_label alone.
void add_importance(torch::jit::Module& module, const TextDataConfig& config, const torch::Tensor& ids,
                    const std::vector<torch::Tensor>& layers, const ExplainOptions& options,
                    const std::vector<report::TextExplanation*>& out, const std::shared_ptr<const text::SubwordVocabulary>& subwords) {
  models::TextClassifier model(module);
  models::ImportanceInputs in;
  in.module = module;
  if (options.shown_label_only)
    for (const report::TextExplanation* e : out) in.explained.push_back(static_cast<std::int64_t>(e->shown_label));
  in.targets = static_cast<std::int64_t>(config.labels.size());
  in.width = ids.size(1);
  std::vector<text::Sequence> real(out.size());
  std::vector<const text::Sequence*> rows;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto n = static_cast<std::int64_t>(out[i]->ids.size());
    in.units.push_back(n);
    in.first.push_back(config.padding == text::Side::kPre ? in.width - n : 0);  // the row's real positions
    in.attention.push_back(out[i]->attention);
    real[i].assign(out[i]->ids.begin(), out[i]->ids.end());
    rows.push_back(&real[i]);
  }
  in.embed = [&] { return std::make_pair(model.embeddings(ids), torch::Tensor()); };  // evaluation mode: no dropout
  in.z = [&](const torch::Tensor& points, const torch::Tensor& r) { return model.logits_embedded(points, ids.index_select(0, r)).scores; };
  in.erased = [&](const std::vector<models::Version>& v) { return score_text_versions(module, config, rows, v, subwords); };
  if (model.has_self_attention()) in.self_attention = [&] { return layers; };
  std::vector<models::RowImportance> scored = models::importance(in, importance_options(options));
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i]->importance_label = scored[i].target;
    store_importance(std::move(scored[i]), out[i]->importance, out[i]->integrated);
  }
}

/// The label text and HTML show: `label`, or the most probable. An unknown label is refused naming
/// `field`, where it came from.
std::size_t shown_label(const report::TextExplanation& e, const TextDataConfig& config, const std::string& label,
                        const std::string& field = "--label") {
  if (!label.empty()) {
    for (std::size_t k = 0; k < config.labels.size(); ++k)
      if (config.labels[k] == label) return k;
    std::string all;
    for (const std::string& l : config.labels) all += (all.empty() ? "" : ", ") + l;
    throw std::invalid_argument(field + ": '" + label + "' is not one of this model's labels (" + all + ")");
  }
  return static_cast<std::size_t>(std::max_element(e.probabilities.begin(), e.probabilities.end()) - e.probabilities.begin());
}

}  // namespace

std::vector<float> score_text_versions(torch::jit::Module& module, const TextDataConfig& config,
                                       const std::vector<const text::Sequence*>& rows, const std::vector<models::Version>& versions,
                                       const std::shared_ptr<const text::SubwordVocabulary>& subwords) {
  std::vector<text::Sequence> kept(versions.size());
  for (std::size_t v = 0; v < versions.size(); ++v) {
    const text::Sequence& ids = *rows.at(static_cast<std::size_t>(versions[v].row));
    for (std::size_t t = 0; t < ids.size() && t < versions[v].keep.size(); ++t)
      if (versions[v].keep[t]) kept[v].push_back(ids[t]);
  }
  text::PadOptions pad;
  pad.maxlen = std::max<std::int64_t>(1, config.maxlen);
  pad.padding = config.padding;
  text::PaddedSequences x = text::pad_sequences(kept, pad);
  x.subwords = subwords;
  return predict_texts(module, x, config.padding, all_rows(x.rows), kScoringBatchSize);
}

std::vector<report::TextExplanation> explain_rows(torch::jit::Module& module, const TextDataConfig& config, const text::PaddedSequences& x,
                                                  const std::vector<std::int64_t>& rows, const ExplainOptions& options,
                                                  std::int64_t batch_size) {
  nn::EvalModeGuard eval(module);
  models::TextClassifier model(module);
  std::vector<report::TextExplanation> out(rows.size());
  for_each_bucket_at_once(rows, x.lengths, batch_size, [&](const std::vector<std::int64_t>& batch, const std::vector<std::size_t>& at) {
    const torch::Tensor word_ids = batch_ids(x, batch, Width::kLongestRow, config.padding);
    const torch::Tensor ids = model_ids(x, word_ids);      // what the model reads ([B, W] or with subwords [B, W, 1 + G])
    torch::Tensor probs, att, word_level, sentence_level;  // hierarchical models: word_level and sentence_level [B, W] each
    std::vector<torch::Tensor> layers;
    {
      torch::NoGradGuard no_grad;  // the outputs and weights shown (a gradient method runs its own pass)
      const models::Scored scored = model.forward(ids);
      probs = scored.scores.to(torch::kFloat32).contiguous();
      att = scored.attention.to(torch::kFloat32).contiguous();
      if (model.has_self_attention()) layers = model.self_attention(ids);  // each [B, heads, W, W]
      if (model.has_sentences()) {
        auto [w, s] = model.attention_levels(ids);
        word_level = w.to(torch::kFloat32).contiguous();
        sentence_level = s.to(torch::kFloat32).contiguous();
      }
    }
    const std::int64_t width = ids.size(1);
    std::vector<report::TextExplanation*> mine;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      report::TextExplanation& e = out[at[i]];
      mine.push_back(&e);
      const auto b = static_cast<std::int64_t>(i);
      const std::int64_t n = x.lengths[static_cast<std::size_t>(batch[i])];
      const std::int64_t first = config.padding == text::Side::kPre ? width - n : 0;  // the row's real positions
      const torch::Tensor row_ids = word_ids[b].slice(0, first, first + n).contiguous();
      e.label_names = config.labels;
      e.ids.assign(row_ids.data_ptr<std::int64_t>(), row_ids.data_ptr<std::int64_t>() + n);
      e.probabilities.assign(probs[b].data_ptr<float>(), probs[b].data_ptr<float>() + probs.size(1));
      const torch::Tensor a = att[b].slice(0, first, first + n).contiguous();
      e.attention.assign(a.data_ptr<float>(), a.data_ptr<float>() + n);
      if (word_level.defined()) {
        const torch::Tensor w = word_level[b].slice(0, first, first + n).contiguous();
        const torch::Tensor s = sentence_level[b].slice(0, first, first + n).contiguous();
        e.word_attention.assign(w.data_ptr<float>(), w.data_ptr<float>() + n);
        e.sentence_attention.assign(s.data_ptr<float>(), s.data_ptr<float>() + n);
      }
      for (const torch::Tensor& layer : layers) {
        std::vector<std::vector<float>> heads;
        for (std::int64_t h = 0; h < layer.size(1); ++h) {
          const torch::Tensor w = layer[b][h].slice(0, first, first + n).slice(1, first, first + n).to(torch::kFloat32).contiguous();
          heads.emplace_back(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
        }
        if (n > 0) e.self_attention.push_back(std::move(heads));
      }
    }
    if (options.shown_label_only)  // the label each row is explained for, before its importance
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto r = static_cast<std::size_t>(batch[i]);
        const bool own = r < options.row_labels.size() && !options.row_labels[r].empty();
        mine[i]->shown_label = shown_label(*mine[i], config, own ? options.row_labels[r] : options.label);
      }
    if (!options.methods.empty()) add_importance(module, config, ids, layers, options, mine, x.subwords);
  });
  return out;
}

std::vector<report::TextExplanation> explain_texts(models::TextClassifier& model, const std::shared_ptr<const text::Tokenizer>& tokenizer,
                                                   const TextDataConfig& config, const std::vector<std::string>& texts,
                                                   std::int64_t batch_size, const ExplainOptions& options) {
  const text::Tokenizer& tok = *tokenizer;
  // The texts' ids, cut to maxlen as the training data was (Keras' truncating 'pre' keeps a long
  // text's end), run in length-bucketed batches; each row's outputs are read at its real positions.
  std::vector<text::Sequence> seqs;
  const text::PaddedSequences x = pad_texts(tokenizer, config, texts, &seqs);
  if (!options.label.empty() && !texts.empty()) (void)shown_label(report::TextExplanation{}, config, options.label);  // before the work
  if (!options.row_labels.empty() && options.row_labels.size() != texts.size())
    throw std::invalid_argument("explain: " + std::to_string(options.row_labels.size()) + " row labels for " +
                                std::to_string(texts.size()) + " texts");
  for (std::size_t i = 0; i < options.row_labels.size(); ++i)
    if (!options.row_labels[i].empty())
      (void)shown_label(report::TextExplanation{}, config, options.row_labels[i], "row label " + std::to_string(i + 1));
  torch::jit::Module module = model.module();
  std::vector<report::TextExplanation> out = explain_rows(module, config, x, all_rows(x.rows), options, batch_size);
  const report::TokenLayout layout = token_layout(config);
  // Each text's words (tokenised again, word by word) on the threads LibTorch was given: texts apart.
  parallel::for_each_range(static_cast<std::int64_t>(texts.size()), 64, [&](std::int64_t begin, std::int64_t end) {
    for (auto t = static_cast<std::size_t>(begin); t < static_cast<std::size_t>(end); ++t) {
      report::align_words(out[t], tok, layout, texts[t], seqs[t].size());
      if (!out[t].importance.empty() && out[t].importance_label < 0) out[t].shown_label = shown_label(out[t], config, options.label);
    }
  });
  return out;
}

report::TextExplanation explain_text(models::TextClassifier& model, const std::shared_ptr<const text::Tokenizer>& tok,
                                     const TextDataConfig& config, const std::string& text, const ExplainOptions& options) {
  return explain_texts(model, tok, config, {text}, 1, options).front();
}

}  // namespace attn::tasks
