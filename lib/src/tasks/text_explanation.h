#pragma once
// Text classifiers' explanations (tasks/text_classification.h's task): a batch of rows run once for
// its probabilities, attention and the asked importance methods (the driver, models/importance.h),
// then each word of the text aligned with its tokens. Internal to the tasks layer.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/script.h>

#include "attn/models/kinds.h"
#include "attn/report/explanation.h"
#include "attn/tasks/text_classification.h"
#include "attn/text/padding.h"

namespace attn::tasks {

/// Explains texts: each one's probabilities and every word with its attention weight, and with
/// options.methods each method's scores per label and token (a word's: its tokens' sum). The texts
/// are tokenised and cut to config.maxlen as the training data was, and run in length-bucketed
/// batches of `batch_size` (a text's result does not depend on its batch mates); words the
/// tokenizer drops and words beyond maxlen are listed as such.
std::vector<report::TextExplanation> explain_texts(models::TextClassifier& model, const std::shared_ptr<const text::Tokenizer>& tokenizer,
                                                   const TextDataConfig& config, const std::vector<std::string>& texts,
                                                   std::int64_t batch_size, const ExplainOptions& options = {});
/// One text, alone.
report::TextExplanation explain_text(models::TextClassifier& model, const std::shared_ptr<const text::Tokenizer>& tokenizer,
                                     const TextDataConfig& config, const std::string& text, const ExplainOptions& options = {});
/// Rows `rows` of x explained (words left to align: faithfulness reads tokens): ids, probabilities,
/// attention, a transformer's self-attention, and options.methods' scores, in length-bucketed batches.
std::vector<report::TextExplanation> explain_rows(torch::jit::Module& module, const TextDataConfig& config, const text::PaddedSequences& x,
                                                  const std::vector<std::int64_t>& rows, const ExplainOptions& options,
                                                  std::int64_t batch_size);
/// p_l of versions of texts with tokens removed: version v keeps the tokens of rows[v.row] (real
/// ids, in order) that v.keep marks, padded as the training data was; [versions x labels]
/// (leave-one-out's and faithfulness' erasures). `subwords`: the rows' words, for a model with subwords.
std::vector<float> score_text_versions(torch::jit::Module& module, const TextDataConfig& config,
                                       const std::vector<const text::Sequence*>& rows, const std::vector<models::Version>& versions,
                                       const std::shared_ptr<const text::SubwordVocabulary>& subwords);

}  // namespace attn::tasks
