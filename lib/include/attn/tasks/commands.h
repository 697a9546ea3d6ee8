#pragma once
/// The model commands as library calls: each app parses its options into one of these requests,
/// calls the function, and prints what it returns. No function here knows a task or a model by
/// name; they go through the registry and the task table.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/tasks/batching.h"

namespace attn::tasks {

struct ExplainRequest {
  enum class Format { kText, kJson };
  std::string model;                   ///< run directory or model.pt
  std::vector<std::string> arguments;  ///< the inputs: texts, or rows as VALUE,VALUE,... (feature models)
  data::Inputs options;                ///< the task's explain inputs (--csv, --rows, --svg)
  Format format = Format::kText;
  std::string html;                    ///< write one page of every explanation here ("" = none)
};
/// `attn explain`: what to print (a text block, or one JSON line, per input). Writes the --html
/// page and the task's --svg pictures (OUT.svg, then OUT-2.svg, ... when there are several).
/// Inputs come from `arguments`, or from `stdin_lines()` when there are none.
std::string explain(const ExplainRequest& request, const std::function<std::vector<std::string>()>& stdin_lines);

struct EvaluateRequest {
  std::string model;        ///< run directory or model.pt
  std::string csv;          ///< the rows to score
  data::Inputs options;     ///< the task's evaluate inputs (columns, --labels-csv, --svg)
  std::int64_t batch_size = kScoringBatchSize;
  int threads = 1;
  std::string predictions;  ///< write the predictions CSV here ("" = none)
  std::string metrics;      ///< write the metrics JSON here ("" = none)
};
/// `attn evaluate`: scores every row with the task's evaluate() (what validation runs), writes the
/// requested files, and returns what to print: the row count and the metrics.
std::string evaluate(const EvaluateRequest& request);

/// `attn export`: checks the model through its task and writes it as one file; returns a line to print.
std::string export_model(const std::string& from, const std::string& to);

/// `attn models`: every registered model with its task, training defaults and config keys.
std::string describe_models();

/// `attn summary`: the layer table of a registered model (`what` = its name, with `overrides`) or of
/// a trained one (`what` = a run directory or model.pt).
std::string summarize(const std::string& what, const nlohmann::json& overrides);

}  // namespace attn::tasks
