// Text classifiers' explanations and word alignment (see text_explanation.h).
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

/// Where a piece of text's ids sit in an explanation: the piece's tokenizer emits `all` ids, the
/// model reads those but the first `cut_front` and the last `cut_back`, from entry `offset` of e.ids.
struct IdSpan {
  std::size_t all = 0, cut_front = 0, cut_back = 0, offset = 0;
  std::string cut_reason;  ///< a cut word's reason
  bool subwords = false;   ///< every token has an id (a model with subwords)
};

/// Appends each word of `text` to e.words with its tokens, its status and the attention of its
/// kept tokens (read at `span`).
/// The words of `text` and each one's tokens: its chunks between spaces, which with the default
/// separators tokenize to the text's tokens in order; with other separators, one word per token.
std::pair<std::vector<std::string>, std::vector<std::vector<std::string>>> words_and_tokens(const text::Tokenizer& tok,
                                                                                            const std::string& text) {
  // (Temporaries are moved, not copied: a 10 MB comment has 1.8 million words.)
  std::vector<std::string> all_tokens = tok.tokenize(text);
  std::vector<std::vector<std::string>> per_chunk;
  std::vector<std::string> chunks = chunks_of(text);
  per_chunk.reserve(chunks.size());
  std::size_t joined = 0;  // the chunks' tokens so far, compared with the text's as they come
  bool same = true;
  for (const std::string& c : chunks) {
    per_chunk.push_back(tok.tokenize(c));
    for (const std::string& t : per_chunk.back()) same = same && joined < all_tokens.size() && all_tokens[joined++] == t;
  }
  if (!same || joined != all_tokens.size()) {
    chunks = all_tokens;
    per_chunk.clear();
    for (std::string& t : all_tokens) per_chunk.push_back({std::move(t)});
  }
  return {std::move(chunks), std::move(per_chunk)};
}

void append_words(report::TextExplanation& e, const text::Tokenizer& tok, const std::string& text, const IdSpan& span) {
  const auto num_words = tok.options().num_words.value_or(0);
  auto [chunks, per_chunk] = words_and_tokens(tok, text);
  e.words.reserve(e.words.size() + chunks.size());
  const std::size_t all = span.all;
  std::size_t next_id = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    using report::WordStatus;
    report::WordWeight w;
    w.word = std::move(chunks[i]);
    w.tokens = std::move(per_chunk[i]);
    std::optional<WordStatus> word_status;  // (none yet)
    if (w.tokens.empty()) {
      word_status = WordStatus::kFiltered;
      w.reason = "only filtered characters";
    }
    for (const std::string& t : w.tokens) {
      const auto index = tok.word_index(t);
      const bool in_range = index && (num_words == 0 || *index < num_words);
      WordStatus status = in_range                  ? WordStatus::kKept
                          : span.subwords           ? WordStatus::kSubwords
                          : tok.options().oov_token ? WordStatus::kOov
                                                    : WordStatus::kDropped;
      if (status != WordStatus::kDropped) {
        if (next_id >= all) throw std::logic_error("explain: tokens and ids do not line up");
        if (next_id < span.cut_front || next_id >= all - span.cut_back) {
          status = WordStatus::kDropped;
          w.reason = span.cut_reason;
        } else {
          const std::size_t at = span.offset + next_id - span.cut_front;
          if (w.count == 0) w.first = at;
          ++w.count;
          w.weight += e.attention[at];
        }
        ++next_id;
      } else {
        w.reason = index ? "beyond num_words" : "unknown word";
      }
      // A word is kept if any of its tokens is; otherwise it takes its tokens' status.
      if (!word_status || status == WordStatus::kKept || (status != WordStatus::kDropped && word_status == WordStatus::kDropped))
        word_status = status;
    }
    w.status = word_status.value_or(WordStatus::kDropped);
    if (w.status != WordStatus::kDropped && w.status != WordStatus::kFiltered) w.reason.clear();
    e.words.push_back(std::move(w));
  }
  if (next_id != all) throw std::logic_error("explain: tokens and ids do not line up");
}

/// Fills e's words: each word of `text` with its tokens, its status and the attention of its kept
/// tokens. `all` is the text's token count before the maxlen cut.
void align_words(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text,
                 std::size_t all) {
  e.text = text;
  e.label_names = config.labels;
  const auto maxlen = static_cast<std::size_t>(config.maxlen);
  IdSpan span{all, 0, 0, 0, "beyond maxlen " + std::to_string(maxlen) + " (truncated as in training)", config.subword_buckets > 0};
  if (maxlen > 0 && all > maxlen) (config.truncating == text::Side::kPre ? span.cut_front : span.cut_back) = all - maxlen;
  append_words(e, tok, text, span);
}

/// Fills e's sentences and words for a hierarchical model: each sentence of `text` with its weight
/// and status, its words with theirs (words beyond max_words and sentences beyond max_sentences
/// listed as cut).
void align_sentences(report::TextExplanation& e, const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text) {
  e.text = text;
  e.label_names = config.labels;
  const text::SentenceLayout& layout = config.sentences;
  std::size_t offset = 0;  // the sentence's first entry of e.ids
  for (const text::DocumentSentence& s : text::read_document(tok, text, layout)) {
    report::SentenceWeight sw;
    sw.text = text.substr(s.begin, s.end - s.begin);
    while (!sw.text.empty() && std::isspace(static_cast<unsigned char>(sw.text.back()))) sw.text.pop_back();
    sw.first_word = e.words.size();
    const std::size_t kept = s.index < 0 ? 0 : std::min<std::size_t>(s.ids.size(), static_cast<std::size_t>(layout.max_words));
    IdSpan span{s.ids.size(), 0, s.ids.size() - kept, offset,
                s.index < 0 ? "beyond max_sentences " + std::to_string(layout.max_sentences) + " (cut as in training)"
                            : "beyond max_words " + std::to_string(layout.max_words) + " (cut as in training)"};
    append_words(e, tok, text.substr(s.begin, s.end - s.begin), span);
    sw.words = e.words.size() - sw.first_word;
    if (s.empty()) {
      sw.status = report::SentenceStatus::kEmpty;
      sw.reason = "no word the tokenizer keeps";
    } else if (s.index < 0) {
      sw.status = report::SentenceStatus::kDropped;
      sw.reason = "beyond max_sentences " + std::to_string(layout.max_sentences);
    } else {
      sw.status = report::SentenceStatus::kRead;
      if (offset >= e.sentence_attention.size()) throw std::logic_error("explain: sentences and ids do not line up");
      sw.weight = e.sentence_attention[offset];
    }
    e.sentences.push_back(std::move(sw));
    offset += kept;
  }
  if (offset != e.ids.size()) throw std::logic_error("explain: sentences and ids do not line up");
}

}  // namespace

std::vector<report::WordWeight> words_of(const text::Tokenizer& tok, const TextDataConfig& config, const std::string& text,
                                         std::size_t read, std::size_t all) {
  report::TextExplanation e;
  e.ids.assign(read, 0);
  e.attention.assign(read, 0.0f);
  if (config.sentences.enabled()) {
    e.sentence_attention.assign(read, 0.0f);
    align_sentences(e, tok, config, text);
  } else {
    align_words(e, tok, config, text, all);
  }
  return std::move(e.words);
}

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
  // Each text's words (tokenised again, word by word) on the threads LibTorch was given: texts apart.
  parallel::for_each_range(static_cast<std::int64_t>(texts.size()), 64, [&](std::int64_t begin, std::int64_t end) {
    for (auto t = static_cast<std::size_t>(begin); t < static_cast<std::size_t>(end); ++t) {
      if (config.sentences.enabled())
        align_sentences(out[t], tok, config, texts[t]);
      else
        align_words(out[t], tok, config, texts[t], seqs[t].size());
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
