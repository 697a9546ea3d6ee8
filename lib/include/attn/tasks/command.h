#pragma once
/// What a task's interface shares with the commands above it (analyses/): which command a task
/// declares inputs for, and the batches rows are scored in. No LibTorch here: the commands' header
/// (analyses/commands.h) includes it, and a program that only calls the commands compiles in seconds.
#include <cstdint>
#include <string>
#include <vector>

#include "attn/data/inputs.h"

namespace attn::tasks {

/// The commands whose inputs (and --help) a task declares (Task::inputs, Task::about): each command its own.
enum class Command { kTrain, kExplain, kEvaluate, kFaithfulness, kExport, kAggregate, kAudit, kRobustness };

/// What a task does for a command: a line for --help, and the command-line inputs it reads.
struct ForCommand {
  std::string about;
  std::vector<data::InputSpec> inputs;
};
/// For a task that reads no texts, a command that does (aggregate, audit, robustness): "not for
/// this task", saying why, and no inputs.
ForCommand texts_only(Command command);

/// Every task's inputs for `command`, each name once (an app registers them all).
std::vector<data::InputSpec> all_inputs(Command command);
/// For --help: per task, its registered models and what `command` does with them (Task::about).
std::string tasks_help(Command command);
/// The importance methods a user can ask for (--methods), in the order explanations show them.
std::vector<std::string> method_names();

/// Validation and `attn evaluate` score rows in length-bucketed batches of this many: the same
/// rows make the same batches, so evaluate on a run's validation rows reproduces its validation
/// bit for bit (other batch sizes agree to float rounding, which can move an AUC where
/// probabilities nearly tie). 64: the fused recurrent kernels' register-blocked path takes batches
/// of up to 64 rows, and smaller batches bucket tighter. 20,000 comments with the main job's model,
/// 1 thread: 3.5 s against 5.4 s at 512 (a Transformer classifier: 1.5 s against 4.8 s); workers
/// sharing the rows get many batches to share.
constexpr std::int64_t kScoringBatchSize = 64;

}  // namespace attn::tasks
