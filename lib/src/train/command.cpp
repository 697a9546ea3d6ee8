// `attn train` as a library call (see command.h): the plan --dump-config prints, and the run with
// its workers and its output.
#include "attn/train/command.h"

#include <cstdio>
#include <optional>

#include "attn/models/ensemble.h"
#include "attn/models/registry.h"
#include "attn/parallel/workers.h"
#include "attn/tasks/task.h"
#include "attn/train/run.h"

namespace attn::train {

TrainingPlan plan_training(const TrainRequest& r) {
  TrainingPlan plan;
  plan.entry = r.model.empty() ? &tasks::model_for_training(r.data) : &models::find_model(r.model);
  const models::ModelEntry& entry = *plan.entry;
  plan.task = &tasks::task_for(entry.kind);
  plan.model_config = models::resolve_config(entry, r.model_overrides);
  torch::jit::Module built = entry.build(plan.model_config, nn::Runtime::kPortable);  // a bad value fails here, before any data is read
  nlohmann::json recipe = entry.training;
  recipe.update(plan.task->training_recipe(r.data));
  if (r.training.contains("embeddings")) recipe.erase("pretrain_epochs");  // the user's vectors instead
  if (!entry.ensembles) recipe.erase("ensemble");                          // a single model where members cannot be combined
  plan.training = effective_options(recipe, r.training);
  models::check_ensemble(entry, plan.training.ensemble);
  plan.task->check_loss_weights({plan.training.pos_weight, plan.training.class_weight, plan.training.span_f1_loss}, built);
  return plan;
}

nlohmann::ordered_json planned_config(const TrainRequest& r) {
  const TrainingPlan plan = plan_training(r);
  nlohmann::ordered_json j;
  j["model"] = plan.entry->name;
  j["task"] = plan.task->name();
  j["model_config"] = plan.model_config;
  // The keys the data will set (vocabulary, labels, features, lengths: ModelEntry::fit), unless the user set them.
  j["model_config_set_from_data"] = nlohmann::json::array();
  for (const models::ConfigKey& k : plan.entry->keys)
    if (k.from_data && !r.model_overrides.contains(k.name)) j["model_config_set_from_data"].push_back(k.name);
  j["training"] = nlohmann::json(plan.training);
  return j;
}

namespace {

/// "epoch 2/3  loss ..  accuracy ..  val_loss .. ...", then a line per object metric (per-label
/// AUC, per-feature attention).
std::string format_epoch(const EpochRecord& e, int epochs) {
  std::string line = "epoch " + std::to_string(e.epoch) + "/" + std::to_string(epochs), groups;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  loss %.4f  accuracy %.4f", e.loss, e.accuracy);
  line += buf;
  for (const auto& [key, value] : e.validation.items()) {
    if (key == "rows" || key == "rows_skipped") continue;  // counts, not metrics
    if (value.is_number()) {
      std::snprintf(buf, sizeof buf, "  val_%s %.4f", key.c_str(), value.get<double>());
      line += buf;
    } else if (value.is_object()) {
      groups += "  val_" + key + ":";
      for (const auto& [name, v] : value.items()) {
        std::snprintf(buf, sizeof buf, " %s %.4f", name.c_str(), v.is_number() ? v.get<double>() : std::nan(""));
        groups += buf;
      }
      groups += "\n";
    }
  }
  std::snprintf(buf, sizeof buf, "  lr %.3g  (%.1f s, %.0f rows/s)%s\n", e.lr, e.seconds, e.rows_per_second, e.best ? "  *best" : "");
  std::string out = line + buf + groups;
  if (e.stop) out += "early stopping: no improvement for the last epochs; model.pt holds the best epoch\n";
  return out;
}

}  // namespace

TrainOutcome run_training(const TrainCommand& command, const std::atomic<bool>& stop, const TrainOutput& output) {
  const parallel::WorkerPlace place = parallel::worker_place_from_environment();  // torchrun's, or one worker
  const auto workers = place.world_size > 1 ? parallel::Workers::connect(place, command.worker_timeout) : nullptr;
  const std::string prefix = parallel::rank_prefix(place);
  const auto print = [&](const std::string& text) {  // each line of a worker after the first names it
    std::string lines;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = std::min(text.find('\n', at), text.size() - 1) + 1;
      lines += prefix + text.substr(at, end - at);
      at = end;
    }
    output.print(lines);
  };
  std::optional<TrainingRun> run;
  if (!command.resume.empty()) {
    for (const std::string& flag : command.given)
      if (flag != "resume" && flag != "epochs" && flag != "worker-timeout")
        throw std::invalid_argument("--resume continues a run with its own data, model and settings; only --epochs may change (drop --" +
                                    flag + ")");
    run.emplace(TrainingRun::resume(command.resume, command.request.training, workers.get()));
  } else {
    TrainRequest request = command.request;
    request.workers = workers.get();
    run.emplace(TrainingRun::start(request));
  }
  const std::string dir = command.resume.empty() ? command.request.out_dir : command.resume;
  if (output.threads) output.threads(run->config().training.threads);  // a resumed run trains with its own
  print(run->describe());
  const int epochs = run->config().training.epochs;
  const bool finished = run->train(stop, place.rank == 0 ? output.progress : nullptr, [&](const EpochRecord& e) {
    if (place.rank == 0) print(format_epoch(e, epochs));  // the same figures on every worker: printed once
  });
  if (!finished) return TrainOutcome::kInterrupted;
  if (const auto& a = run->config().logit_adjustment; !a.is_null() && place.rank == 0) {
    std::string offsets;
    char buf[96];
    for (const auto& [name, v] : a.at("offsets").items()) {
      std::snprintf(buf, sizeof buf, "%s%s %+.1f", offsets.empty() ? "" : ", ", name.c_str(), v.get<double>());
      offsets += buf;
    }
    for (const auto& [key, v] : a.items())  // "macro_f1_before" / "span_f1_before", then the after
      if (key.size() > 7 && key.compare(key.size() - 7, 7, "_before") == 0) {
        const std::string metric = key.substr(0, key.size() - 7);
        std::snprintf(buf, sizeof buf, "; %s %.4f -> %.4f\n", metric.c_str(), v.get<double>(), a.at(metric + "_after").get<double>());
      }
    print("logit adjustment on the held-out rows, added to model.pt's output bias: " + offsets + buf);
  }
  print("done: model.pt, metrics.jsonl and checkpoint.pt in " + dir + "\n");
  return TrainOutcome::kFinished;
}

}  // namespace attn::train
