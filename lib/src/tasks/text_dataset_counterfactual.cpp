// Text classifiers' data with counterfactual copies (--counterfactual): the training rows that
// mention an identity term read again with the term swapped, the copies as the model reads them,
// and their file in a data directory (see text_dataset.h).
#include <stdexcept>

#include "attn/io/atomic_file.h"
#include "attn/text/identity_terms.h"
#include "task_support.h"
#include "text_dataset.h"

namespace attn::tasks {

CounterfactualTexts counterfactual_texts(data::Prepared& prepared, const std::string& csv, const text::TextCsvOptions& columns,
                                         const std::vector<std::string>& terms, const TrainedModel::TextRewrite& rewrite) {
  const std::vector<std::string> texts = texts_again(prepared, csv, columns, nullptr);
  CounterfactualTexts out;
  for (std::size_t r = 0; r < texts.size(); ++r)
    if (std::optional<std::string> copy = text::counterfactual_copy(texts[r], terms, r)) {
      const auto row = static_cast<std::int64_t>(r);
      out.rows.push_back(row);
      out.texts.push_back(rewrite ? rewrite(*copy, row + 1) : std::move(*copy));  // (a rewrite's rows are 1-based)
    }
  prepared.report["counterfactual"] = {{"terms", terms.size()}, {"rows", texts.size()}, {"rows_with_a_copy", out.rows.size()}};
  return out;
}

Counterfactuals encode_counterfactuals(const CounterfactualTexts& copies, std::int64_t rows, const text::Tokenizer& tok,
                                       const TextDataConfig& config, const std::shared_ptr<text::SubwordVocabulary>& subwords,
                                       const text::PadOptions& pad, int threads) {
  Counterfactuals out;
  out.copy_of_row.assign(static_cast<std::size_t>(rows), -1);
  for (std::size_t i = 0; i < copies.rows.size(); ++i)
    out.copy_of_row[static_cast<std::size_t>(copies.rows[i])] = static_cast<std::int64_t>(i);
  out.x = text::pad_sequences(sequences_of(tok, config, copies.texts, threads, subwords.get()), pad);
  out.x.subwords = subwords;
  return out;
}

std::string counterfactuals_json(const CounterfactualTexts& copies) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < copies.rows.size(); ++i) rows.push_back({copies.rows[i], copies.texts[i]});
  return nlohmann::json{{"rows", rows}}.dump() + "\n";
}

CounterfactualTexts read_counterfactuals(const std::string& path, std::int64_t rows) {
  CounterfactualTexts out;
  read_rows_file(path, "the counterfactual copies of rows", [&](const nlohmann::json& row) {
    const auto r = row.at(0).get<std::int64_t>();
    if (r < 0 || r >= rows || (!out.rows.empty() && r <= out.rows.back()))
      throw std::runtime_error("row " + std::to_string(r) + " is not a next row of the data's " + std::to_string(rows));
    out.rows.push_back(r);
    out.texts.push_back(row.at(1).get<std::string>());
  });
  return out;
}

}  // namespace attn::tasks
