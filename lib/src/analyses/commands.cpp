#include "attn/analyses/commands.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "attn/analyses/faithfulness.h"
#include "attn/io/atomic_file.h"
#include "attn/models/ensemble.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/parallel/sharing.h"
#include "attn/tasks/task.h"

namespace attn::analyses {

using namespace tasks;  // the task interface (tasks/task.h) the analyses drive
namespace {

/// PATH for the first of several pictures, then PATH-2.svg, PATH-3.svg ...
std::string numbered(const std::string& path, std::size_t i) {
  if (i == 0) return path;
  const std::size_t dot = path.rfind('.');
  const std::string n = "-" + std::to_string(i + 1);
  return dot == std::string::npos || path.find('/', dot) != std::string::npos ? path + n : path.substr(0, dot) + n + path.substr(dot);
}

std::string with_commas(std::int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

/// `attn summary`'s table: a registered model's layers, Keras-style.
std::string format_layer_table(const models::ModelEntry& entry, const models::LayerTable& table) {
  char line[256];
  std::string out = "Model: " + entry.name + "\n";
  std::snprintf(line, sizeof line, "%-20s %-34s %-18s %12s\n", "Layer", "Type", "Output shape", "Param #");
  out += line + std::string(87, '=') + "\n";
  for (const models::LayerCount& r : table.rows) {
    std::snprintf(line, sizeof line, "%-20s %-34s %-18s %12s\n", r.row.name.c_str(), r.row.type.c_str(), r.row.output_shape.c_str(),
                  with_commas(r.count).c_str());
    out += line;
  }
  out += std::string(87, '=') + "\nTotal params: " + with_commas(table.total) + "\nTrainable params: " + with_commas(table.total) + "\n";
  return out;
}

}  // namespace

void explain(const ExplainRequest& r, const std::function<std::vector<std::string>()>& stdin_lines,
             const std::function<void(const std::string&)>& print) {
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kExplain, r.options);
  model->configure(r.options);
  const ExplainOptions options = explain_options(*model, r.methods, r.steps, r.label);
  const std::vector<Input> inputs = model->read_inputs(r.arguments, r.options, stdin_lines);
  // Printed as they are done, a chunk at a time (a whole CSV's explanations need not fit in memory),
  // unless a page or pictures of all of them are wanted.
  const bool all_at_once = !r.html.empty() || r.options.given("svg");
  const std::size_t chunk = all_at_once ? std::max<std::size_t>(1, inputs.size()) : 256;
  for (std::size_t first = 0; first < inputs.size() || (first == 0 && all_at_once); first += chunk) {
    const std::vector<Input> some(inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                  inputs.begin() + static_cast<std::ptrdiff_t>(std::min(inputs.size(), first + chunk)));
    const std::unique_ptr<Explanations> all = model->explain(some, 64, options);
    std::string out;
    for (std::size_t i = 0; i < all->size(); ++i) {
      out += r.format == ExplainRequest::Format::kJson ? all->json_line(i) : all->text(i);
      if (r.format == ExplainRequest::Format::kJson) out += '\n';
    }
    print(out);
    if (!all_at_once) continue;
    if (r.options.given("svg")) {
      const std::vector<std::string> pictures = all->svg();
      for (std::size_t i = 0; i < pictures.size(); ++i) io::write_file_atomic(numbered(r.options.text("svg"), i), pictures[i]);
    }
    if (!r.html.empty()) io::write_file_atomic(r.html, all->html());
    break;
  }
}

std::string explain(const ExplainRequest& r, const std::function<std::vector<std::string>()>& stdin_lines) {
  std::string out;
  explain(r, stdin_lines, [&](const std::string& s) { out += s; });
  return out;
}

std::string faithfulness(const FaithfulnessRequest& r) {
  if (r.rows < 1) throw std::invalid_argument("--rows must be >= 1");
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kFaithfulness, r.options);
  FaithfulnessOptions o;
  check_steps(r.steps, "--steps");
  std::vector<models::Method> available = model->methods();
  available.push_back(models::Method::kRandom);
  o.methods = r.methods.empty() ? model->methods() : models::check_available(r.methods, available, "--methods");
  o.steps = r.steps;
  o.seed = r.seed;
  o.progress = r.progress;
  std::string lines;
  if (!r.per_row.empty()) o.per_row = [&](const std::string& line) { lines += line + "\n"; };
  const std::unique_ptr<Erasures> rows = model->erasures(r.csv, r.options, r.rows, r.threads);
  nlohmann::ordered_json report = {{"model", model->saved().entry->name}, {"csv", r.csv}};
  const nlohmann::ordered_json measured = measure_faithfulness(*rows, o);
  for (const auto& [key, value] : measured.items()) report[key] = value;
  if (!r.per_row.empty()) io::write_file_atomic(r.per_row, lines);
  if (!r.json.empty()) io::write_file_atomic(r.json, report.dump(2) + "\n");
  return format_faithfulness(report);
}

std::string evaluate(const EvaluateRequest& r) {
  if (r.batch_size < 1) throw std::invalid_argument("--batch-size must be >= 1");
  std::unique_ptr<TrainedModel> model = open_for(r.model, Command::kEvaluate, r.options);
  model->configure(r.options);
  const std::unique_ptr<Dataset> data = model->open_csv(r.csv, r.options, r.threads);
  const Evaluation e = data->evaluate(model->module(), all_rows(data->rows()), {r.batch_size, EvaluateOptions::Detail::kFull, r.sharing});
  if (e.metrics.empty() && !r.metrics.empty())
    throw std::invalid_argument("--metrics needs labels or targets in the CSV (text models: or --labels-csv)");
  if (r.sharing && r.sharing->rank() != 0) return "";  // rank 0 writes and reports
  if (!r.predictions.empty()) io::write_file_atomic(r.predictions, e.predictions_csv);
  if (r.options.given("svg") && !e.svg.empty()) io::write_file_atomic(r.options.text("svg"), e.svg.front());
  for (const auto& [path, content] : e.files) io::write_file_atomic(path, content);
  std::string out = "scored " + std::to_string(data->rows()) + " rows of " + r.csv + "\n";
  if (e.metrics.empty()) return out;
  nlohmann::ordered_json metrics = {{"csv", r.csv}};
  for (const auto& [key, value] : e.metrics.items()) metrics[key] = value;
  if (!r.metrics.empty()) io::write_file_atomic(r.metrics, metrics.dump(2) + "\n");
  return out + metrics.dump(2) + "\n";
}

std::string evaluate(const EvaluateRequest& request, std::chrono::seconds worker_timeout) {
  return parallel::run_shared(
      request, [](const EvaluateRequest& shared) { return evaluate(shared); }, worker_timeout);
}

std::string describe_models(const std::function<std::string(const nlohmann::json& training)>& training_flags) {
  std::string out;
  char line[512];
  for (const models::ModelEntry& m : models::models()) {
    std::snprintf(line, sizeof line, "%s  (task: %s)\n  %s\n  training defaults:%s\n", m.name.c_str(), task_for(m.kind).name(),
                  m.description.c_str(), training_flags(m.training).c_str());
    out += line;
    out += "  config keys (attn train --set KEY=VALUE):\n";
    for (const models::ConfigKey& k : m.keys) {
      std::snprintf(line, sizeof line, "    %-18s %-8s %s\n", k.name.c_str(), k.default_value.dump().c_str(), k.doc.c_str());
      out += line;
    }
  }
  return out;
}

std::string export_model(const std::string& from, const std::string& to) {
  std::unique_ptr<TrainedModel> model = open_model(from);  // checks that its task can use it
  models::SavedModel saved = model->saved();
  models::save_model(to, saved.portable, saved.config, saved.files);
  return "wrote " + to + " (" + saved.entry->name + ")\n";
}

std::string summarize(const std::string& what, const nlohmann::json& overrides) {
  nlohmann::json config;
  if (std::filesystem::exists(what)) {
    config = models::load_model(what, nn::Runtime::kPortable).config;
  } else {
    const models::ModelEntry& entry = models::find_model(what);
    config = {{"model", entry.name}, {"model_config", models::resolve_config(entry, overrides)}};
  }
  const models::ModelEntry& entry = models::find_model(config.at("model"));
  const nlohmann::json model_config = models::resolve_config(entry, config.at("model_config"));
  const models::LayerTable table = models::layer_table(entry, entry.build(model_config, nn::Runtime::kPortable), model_config);
  std::string out = format_layer_table(entry, table);
  if (const int n = models::ensemble_size(config); n > 1)
    out += "An ensemble of " + std::to_string(n) +
           " such models (attn train --ensemble), their probabilities averaged: " + with_commas(n * table.total) + " params\n";
  return out;
}

}  // namespace attn::analyses
