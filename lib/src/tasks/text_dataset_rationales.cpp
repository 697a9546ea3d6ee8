// Text classifiers' data with human rationales: the tokens people marked, found in the rows read
// again as explain aligns words, the attention they ask for, and their file in a data directory
// (see text_dataset.h).
#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "attn/io/atomic_file.h"
#include "task_support.h"
#include "text_dataset.h"
#include "text_explanation.h"

namespace attn::tasks {

std::vector<std::pair<std::int32_t, float>> attention_target(const MarkedSpans& spans, RationaleTarget target) {
  std::size_t tokens = 0, used = 0;
  for (const std::vector<std::int32_t>& span : spans) tokens += span.size(), used += span.empty() ? 0 : 1;
  std::vector<std::pair<std::int32_t, float>> out;
  for (const std::vector<std::int32_t>& span : spans)
    for (std::int32_t t : span)
      out.emplace_back(
          t, target == RationaleTarget::kWords ? 1.0f / static_cast<float>(tokens) : 1.0f / static_cast<float>(used * span.size()));
  return out;
}

RationaleMarks mark_rationales(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                               const std::vector<data::RationaleRow>& rationales, const std::string& file, TextDataConfig config) {
  config.maxlen = prepared.data.x.cols;  // the rows as prepared (a new run's config learns its width from them later)
  const std::vector<std::string> texts = texts_again(prepared, csv, columns, nullptr);
  std::unordered_map<std::string_view, std::size_t> by_text;  // the first rationale of each text
  for (std::size_t i = 0; i < rationales.size(); ++i) by_text.emplace(rationales[i].text, i);
  std::vector<std::int64_t> rows;  // the training rows with a rationale, and which
  std::vector<std::size_t> which;
  for (std::size_t r = 0; r < texts.size(); ++r)
    if (const auto it = by_text.find(texts[r]); it != by_text.end()) {
      rows.push_back(static_cast<std::int64_t>(r));
      which.push_back(it->second);
    }
  if (rows.empty())
    throw std::invalid_argument("--rationales: no text of " + file + " is a text of " + csv +
                                " (a rationale applies to the training rows whose text is its text, byte for byte)");
  const text::Tokenizer& tok = prepared.tokenizer;
  std::vector<std::string> matched;  // the rows' token counts before the maxlen cut (word-level models)
  for (std::int64_t r : rows) matched.push_back(texts[static_cast<std::size_t>(r)]);
  std::vector<std::size_t> all(rows.size(), 0);
  if (!config.sentences.enabled()) {
    const std::vector<text::Sequence> seqs = config.subword_buckets > 0 ? std::vector<text::Sequence>() : tok.texts_to_sequences(matched);
    for (std::size_t i = 0; i < rows.size(); ++i) all[i] = config.subword_buckets > 0 ? tok.tokenize(matched[i]).size() : seqs[i].size();
  }
  RationaleMarks marks(texts.size());
  std::vector<bool> used(rationales.size(), false);
  std::int64_t marked_words = 0, not_read = 0, with_marks = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const data::RationaleRow& q = rationales[which[i]];
    used[which[i]] = true;
    const auto r = static_cast<std::size_t>(rows[i]);
    const auto read = static_cast<std::size_t>(prepared.data.x.lengths[r]);
    if (!config.sentences.enabled() && read != std::min(all[i], static_cast<std::size_t>(config.maxlen)))
      throw std::logic_error(csv + ": row " + std::to_string(r + 1) + " read again does not give its prepared tokens");
    const std::vector<report::WordWeight> words = report::words_of(tok, token_layout(config), matched[i], read, all[i]);
    std::vector<std::size_t> span_of(q.words.size(), 0);  // a marked word's span
    for (std::size_t s = 0; s < q.spans.size(); ++s)
      for (auto k = q.spans[s].first; k < q.spans[s].second; ++k) span_of[static_cast<std::size_t>(k)] = s;
    MarkedSpans mine(q.spans.size());
    std::size_t w = 0;  // the row's words are the rationale's non-empty words
    for (std::size_t k = 0; k < q.words.size(); ++k) {
      if (q.words[k].empty()) continue;
      if (w >= words.size() || words[w].word != q.words[k])
        throw std::runtime_error(file + ":" + std::to_string(q.line) + ": the rationale's words do not line up with the words of " + csv +
                                 "'s row " + std::to_string(r + 1) + " at word " + std::to_string(k) + " ('" + q.words[k] +
                                 "'; a tab or newline inside a word?)");
      if (q.marked[k]) {
        ++marked_words;
        if (words[w].count == 0) ++not_read;
        for (std::size_t t = 0; t < words[w].count; ++t) mine[span_of[k]].push_back(static_cast<std::int32_t>(words[w].first + t));
      }
      ++w;
    }
    if (w != words.size())
      throw std::runtime_error(file + ":" + std::to_string(q.line) + ": the rationale has " + std::to_string(w) + " words, " + csv +
                               "'s row " + std::to_string(r + 1) + " " + std::to_string(words.size()));
    mine.erase(std::remove_if(mine.begin(), mine.end(), [](const std::vector<std::int32_t>& s) { return s.empty(); }), mine.end());
    with_marks += mine.empty() ? 0 : 1;
    marks[r] = std::move(mine);
  }
  prepared.report["rationales"] = {{"file", file},
                                   {"rationales", rationales.size()},
                                   {"rows", rows.size()},
                                   {"rows_trained", with_marks},
                                   {"rationales_unused", std::count(used.begin(), used.end(), false)},
                                   {"marked_words", marked_words},
                                   {"marked_words_not_read", not_read}};
  return marks;
}

std::string marks_json(const RationaleMarks& marks) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t r = 0; r < marks.size(); ++r)
    if (!marks[r].empty()) rows.push_back({r, marks[r]});
  return nlohmann::json{{"rows", rows}}.dump() + "\n";
}

RationaleMarks read_marks(const std::string& path, std::int64_t rows) {
  RationaleMarks marks(static_cast<std::size_t>(rows));
  read_rows_file(path, "the marks of rationales", [&](const nlohmann::json& row) {
    const auto r = row.at(0).get<std::int64_t>();
    if (r < 0 || r >= rows) throw std::runtime_error("row " + std::to_string(r) + " is not one of the data's " + std::to_string(rows));
    const nlohmann::json& spans = row.at(1);
    if (!spans.empty() && spans[0].is_number())  // written before spans were kept: one span, as a word target reads it
      marks[static_cast<std::size_t>(r)] = {spans.get<std::vector<std::int32_t>>()};
    else
      marks[static_cast<std::size_t>(r)] = spans.get<MarkedSpans>();
  });
  return marks;
}

}  // namespace attn::tasks
