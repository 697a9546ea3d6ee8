#pragma once
/// The model commands as library calls: each app parses its options into one of these requests,
/// calls the function, and prints what it returns. No function here knows a task or a model by
/// name; they go through the registry and the task table. This header does not include LibTorch:
/// a program that only calls the commands compiles in seconds (the tasks' own API is tasks/task.h).
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/inputs.h"
#include "attn/models/methods.h"
#include "attn/parallel/sharing.h"
#include "attn/tasks/command.h"

namespace attn::analyses {

struct ExplainRequest {
  enum class Format { kText, kJson };
  std::string model;                   ///< run directory or model.pt
  std::vector<std::string> arguments;  ///< the inputs: texts, or rows as VALUE,VALUE,... (feature models)
  data::Inputs options;                ///< the task's explain inputs (--csv, --rows, --svg)
  Format format = Format::kText;
  std::string html;                     ///< write one page of every explanation here ("" = none)
  std::vector<models::Method> methods;  ///< --methods M[,M...] (none, or the attention alone: the attention only)
  int steps = models::kDefaultSteps;    ///< integrated gradients' steps
  std::string label;                    ///< the label text output shows ("": the most probable)
};
/// `attn explain`: prints a text block, or one JSON line, per input, as they are done (a whole
/// CSV streams). Writes the --html page and the task's --svg pictures (OUT.svg, then OUT-2.svg, ...
/// when there are several). Inputs come from `arguments`, or from `stdin_lines()` when there are none.
void explain(const ExplainRequest& request, const std::function<std::vector<std::string>()>& stdin_lines,
             const std::function<void(const std::string&)>& print);
/// The same, everything printed returned as one string.
std::string explain(const ExplainRequest& request, const std::function<std::vector<std::string>()>& stdin_lines);

struct FaithfulnessRequest {
  std::string model;                    ///< run directory or model.pt
  std::string csv;                      ///< the rows to measure
  data::Inputs options;                 ///< the task's faithfulness inputs (--text-column, --id-column)
  std::int64_t rows = 100;              ///< the first this many measurable rows
  std::vector<models::Method> methods;  ///< none: every method the model gives
  int steps = models::kDefaultSteps;    ///< integrated gradients' steps
  std::uint64_t seed = 1;               ///< the random floor's
  int threads = 1;
  std::string json;                                                     ///< write the figures here as JSON ("" = none)
  std::string per_row;                                                  ///< write each row's figures here as JSON Lines ("" = none)
  std::function<void(std::int64_t done, std::int64_t total)> progress;  ///< after each chunk of rows
};
/// `attn faithfulness` (analyses/faithfulness.h): measures the methods on the rows, writes the
/// requested files, and returns the table to print.
std::string faithfulness(const FaithfulnessRequest& request);

struct EvaluateRequest {
  std::string model;     ///< run directory or model.pt
  std::string csv;       ///< the rows to score
  data::Inputs options;  ///< the task's evaluate inputs (columns, --labels-csv, --svg)
  std::int64_t batch_size = tasks::kScoringBatchSize;
  int threads = 1;
  std::string predictions;  ///< write the predictions CSV here ("" = none)
  std::string metrics;      ///< write the metrics JSON here ("" = none)
  /// Workers sharing the rows, or none. Every worker reads the CSV and scores its share; rank 0
  /// writes the files and returns the report, the others return "".
  const parallel::RowSharing* sharing = nullptr;
};
/// `attn evaluate`: scores every row with the task's evaluate() (what validation runs), writes the
/// requested files, and returns what to print: the row count and the metrics. Shared by workers,
/// the files are byte for byte those one process writes.
std::string evaluate(const EvaluateRequest& request);

/// `attn evaluate` under torchrun or `attn evaluate --nproc N`: joins the workers the environment
/// names (parallel/workers.h; one process when it names none) and shares the rows among them: the
/// same predictions and metrics files as one process. Rank 0 returns the report; the others "".
std::string evaluate(const EvaluateRequest& request, std::chrono::seconds worker_timeout);

/// `attn models`: every registered model with its task, description, training defaults (as
/// `training_flags` writes them: `attn train` flags) and config keys.
std::string describe_models(const std::function<std::string(const nlohmann::json& training)>& training_flags);

/// `attn export`: checks the model through its task and writes it as one file; returns a line to print.
std::string export_model(const std::string& from, const std::string& to);

/// `attn summary`: the layer table of a registered model (`what` = its name, with `overrides`) or of
/// a trained one (`what` = a run directory or model.pt).
std::string summarize(const std::string& what, const nlohmann::json& overrides);

}  // namespace attn::analyses
