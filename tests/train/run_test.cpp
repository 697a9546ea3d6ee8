// Training runs: the registry's training defaults, flags over them, typed config.json, resume rules.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "attn/analyses/commands.h"
#include "attn/data/skipgram.h"
#include "attn/io/atomic_file.h"
#include "attn/models/ensemble.h"
#include "attn/models/kinds.h"
#include "attn/models/saved_model.h"
#include "attn/tasks/task.h"
#include "attn/train/run.h"
#include "train_test_util.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

std::string feature_csv(const fs::path& dir, int rows) {
  std::ofstream f(dir / "f.csv");
  f << "a,b,label\n";
  for (int i = 0; i < rows; ++i) f << (i % 7) * 0.1 << "," << (i % 3) - 1 << "," << (i % 3 == 2 ? 1 : 0) << "\n";
  return (dir / "f.csv").string();
}

/// A one-class-per-row CSV of `rows` in `dir`, and the inputs that read it.
std::vector<std::pair<std::string, std::string>> class_inputs(const fs::path& dir, const std::vector<std::string>& rows) {
  const std::string csv = tasks_test::write_csv(dir / "t.csv", "post_id,text,label", rows);
  return {{"csv", csv}, {"text-column", "text"}, {"id-column", "post_id"}, {"label-column", "label"}, {"maxlen", "12"}};
}

/// The macro-F1 of `model` on the last 48 of `rows` (the held-out fifth of 240).
double held_out_macro_f1(tasks::TrainedModel& model, const fs::path& dir, const std::vector<std::string>& rows) {
  const std::string held =
      tasks_test::write_csv(dir / "held.csv", "post_id,text,label", std::vector<std::string>(rows.end() - 48, rows.end()));
  data::Inputs none;
  const auto scored = model.open_csv(held, none, 1);
  const auto e = scored->evaluate(model.module(), tasks::all_rows(scored->rows()), {8, tasks::EvaluateOptions::Detail::kMetrics});
  return e.metrics.at("macro_f1").get<double>();
}

}  // namespace

TEST_CASE("with no training flags a run takes its model's recipe, flags override it", "[train][run]") {
  const auto dir = tasks_test::scratch("defaults");
  const std::string csv = feature_csv(dir, 100);
  train::TrainRequest r =
      tasks_test::train_request("feature-attention", (dir / "a").string(), csv);  // the plan: tests/train/command_test.cpp
  r.training["epochs"] = 2;
  r.training["batch_size"] = 16;
  const train::TrainingRun run = train::TrainingRun::start(r);
  CHECK(run.config().training.epochs == 2);
  CHECK(run.config().training.batch_size == 16);
  CHECK(run.config().training.val_split == 0.3);
  CHECK(run.config().model_config.at("features") == 2);  // fitted to the data
  const auto written = nlohmann::json::parse(io::read_file((dir / "a" / "config.json").string())).get<train::RunConfig>();
  CHECK(written.data.at("features") == nlohmann::json{"a", "b"});
  CHECK(written.data.at("csv") == fs::absolute(dir / "a" / "data" / "f.csv").string());
  fs::remove_all(dir);
}

TEST_CASE("bad settings are std::invalid_argument before any file is written", "[train][run]") {
  const auto dir = tasks_test::scratch("bad");
  const std::string csv = feature_csv(dir, 50);
  train::TrainRequest r = tasks_test::train_request("feature-attention", (dir / "x").string(), csv);
  r.training["lr"] = 0.0;
  CHECK_THROWS_WITH(train::TrainingRun::start(r), Catch::Contains("--lr must be > 0"));
  r = tasks_test::train_request("feature-attention", (dir / "x").string(), csv);
  r.training["batch_size"] = 1e30;
  CHECK_THROWS_WITH(train::TrainingRun::start(r), Catch::Contains("\"batch_size\" must be an integer, got 1e+30"));
  r = tasks_test::train_request("feature-attention", (dir / "x").string(), csv);
  r.model_overrides = {{"hidden", {0}}};
  CHECK_THROWS_AS(train::TrainingRun::start(r), std::invalid_argument);
  r = tasks_test::train_request("feature-attention", (dir / "x").string(), csv);
  r.data.set("text-column", "t", data::Inputs::Origin::kGiven);
  CHECK_THROWS_WITH(train::TrainingRun::start(r), "--text-column does not apply to feature-attention (a feature-classification model)");
  CHECK_FALSE(fs::exists(dir / "x"));
  fs::remove_all(dir);
}

TEST_CASE("resume: the run's own settings, more epochs allowed, a changed data file refused", "[train][run]") {
  const auto dir = tasks_test::scratch("resume");
  const std::string csv = feature_csv(dir, 60);
  train::TrainRequest r = tasks_test::train_request("feature-attention", (dir / "run").string(), csv);
  r.training["epochs"] = 1;
  {
    train::TrainingRun run = train::TrainingRun::start(r);
    std::atomic<bool> stop{false};
    REQUIRE(run.train(stop, nullptr, nullptr));
  }
  CHECK_THROWS_WITH(train::TrainingRun::resume((dir / "run").string(), {{"lr", 0.5}}), Catch::Contains("only --epochs may change"));
  {
    train::TrainingRun run = train::TrainingRun::resume((dir / "run").string(), {{"epochs", 2}});
    CHECK(run.epochs_done() == 1);
    std::atomic<bool> stop{false};
    REQUIRE(run.train(stop, nullptr, nullptr));
    CHECK(run.epochs_done() == 2);
  }
  feature_csv(dir / "run" / "data", 61);  // the run's copy of its CSV changes
  CHECK_THROWS_WITH(train::TrainingRun::resume((dir / "run").string(), nlohmann::json::object()),
                    Catch::Contains("data.rows was 60") && Catch::Contains("changed since"));
  io::write_file_atomic((dir / "run" / "config.json").string(), "{\"model\": 3}");
  CHECK_THROWS_WITH(train::TrainingRun::resume((dir / "run").string(), nlohmann::json::object()),
                    Catch::Contains("config.json: not a run configuration"));
  // A number of the wrong kind is refused by name, never converted (1e49 into an int is undefined
  // behaviour; the config fuzzer found it).
  io::write_file_atomic((dir / "run" / "config.json").string(), R"({"model": "feature-attention", "training": {"epochs": 1e49}})");
  CHECK_THROWS_WITH(
      train::TrainingRun::resume((dir / "run").string(), nlohmann::json::object()),
      Catch::Contains("config.json: not a run configuration") && Catch::Contains("\"training.epochs\" must be an integer, got 1e+49"));
  fs::remove_all(dir);
}

TEST_CASE("early stopping: training ends after patience epochs without improvement, model.pt is the best epoch", "[train][run]") {
  const auto dir = tasks_test::scratch("early");
  // The validation rows (the last 40) have their labels turned over: the better the model learns
  // the training rows, the worse val_loss; the run stops after epoch 3 with epoch 1 as its best.
  auto rows = tasks_test::text_rows(200);
  for (std::size_t i = 160; i < rows.size(); ++i) {
    std::string& r = rows[i];
    r[r.size() - 1] = r[r.size() - 1] == '1' ? '0' : '1';
    r[r.size() - 3] = r[r.size() - 3] == '1' ? '0' : '1';
  }
  const std::string csv = tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", rows);
  const auto last =
      tasks_test::train_run("bilstm-attention", (dir / "run").string(), {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}},
                            {{"embed_dim", 8}, {"lstm_units", 4}},
                            {{"epochs", 10}, {"batch_size", 16}, {"lr", 0.02}, {"early_stopping_patience", 2}, {"monitor", "val_loss"}});
  CHECK(last.at("epoch") == 3);
  std::vector<nlohmann::json> epochs;
  {
    std::ifstream f(dir / "run" / "metrics.jsonl");
    for (std::string line; std::getline(f, line);) epochs.push_back(nlohmann::json::parse(line));
  }
  REQUIRE(epochs.size() == 3);
  CHECK(epochs[0].at("best") == true);
  CHECK(epochs[0].at("val_loss") != epochs[2].at("val_loss"));
  const auto model = tasks::open_model((dir / "run").string());
  data::Inputs none;
  const auto val = model->open_csv(
      tasks_test::write_csv(dir / "v.csv", "id,comment_text,bad,rude", std::vector<std::string>(rows.end() - 40, rows.end())), none, 1);
  const auto e = val->evaluate(model->module(), tasks::all_rows(val->rows()), {});
  CHECK(std::abs(e.metrics.at("loss").get<double>() - epochs[0].at("val_loss").get<double>()) <= 1e-6);  // the best, not the last
  // checkpoint.pt holds the last epoch: --resume continues from epoch 3.
  train::TrainingRun run = train::TrainingRun::resume((dir / "run").string(), {{"epochs", 4}});
  CHECK(run.epochs_done() == 3);
  fs::remove_all(dir);
}

TEST_CASE("validation rows from --val-csv, a file of their own, kept by the run for --resume", "[train][run]") {
  const auto dir = tasks_test::scratch("valcsv");
  const std::string train_csv = feature_csv(dir, 80);
  fs::create_directories(dir / "v");
  const std::string val_csv = feature_csv(dir / "v", 30);
  train::TrainRequest r = tasks_test::train_request("feature-attention", (dir / "run").string(), train_csv);
  r.data.set("val-csv", val_csv, data::Inputs::Origin::kGiven);
  r.training["epochs"] = 1;
  {
    train::TrainingRun run = train::TrainingRun::start(r);
    std::atomic<bool> stop{false};
    REQUIRE(run.train(stop, nullptr, nullptr));
    CHECK(run.config().validation.at("rows") == 30);
  }
  std::ifstream f(dir / "run" / "metrics.jsonl");
  std::string line;
  std::getline(f, line);
  const auto epoch = nlohmann::json::parse(line);
  CHECK(epoch.at("val_rows") == 30);
  CHECK(epoch.at("train_rows") == 80);  // every row of --csv trains
  CHECK(fs::exists(dir / "run" / "data" / "validation.csv"));
  fs::remove(val_csv);
  train::TrainingRun resumed = train::TrainingRun::resume((dir / "run").string(), {{"epochs", 2}});
  std::atomic<bool> stop{false};
  CHECK(resumed.train(stop, nullptr, nullptr));
  fs::remove_all(dir);
}

TEST_CASE("validation rows from --val-csv for a text model: read with the training tokenizer, columns and maxlen", "[train][run]") {
  const auto dir = tasks_test::scratch("valcsv_text");
  const std::string train_csv = tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", tasks_test::text_rows(120));
  std::vector<std::string> val_rows = tasks_test::text_rows(40);
  val_rows.push_back("v1,\"never seen words only\",0,1");
  const std::string val_csv = tasks_test::write_csv(dir / "v.csv", "id,comment_text,bad,rude", val_rows);
  const auto last = tasks_test::train_run("bilstm-attention", (dir / "run").string(),
                                          {{"csv", train_csv}, {"labels", "bad,rude"}, {"maxlen", "12"}, {"val-csv", val_csv}},
                                          {{"embed_dim", 8}, {"lstm_units", 4}}, {{"epochs", 1}, {"batch_size", 16}});
  CHECK(last.at("val_rows") == 41);
  CHECK(last.at("train_rows") == 120);  // every row of --csv trains
  // The validation's prepared data: the run's tokenizer (the new words unknown), its maxlen.
  const auto report = nlohmann::json::parse(io::read_file((dir / "run" / "data" / "validation" / "prepare.json").string()));
  CHECK(report.at("tokenizer").at("fitted_here") == false);
  CHECK(report.at("padding").at("maxlen") == 12);
  CHECK(report.at("tokens").at("unknown").get<int>() >= 4);
  fs::remove_all(dir);
}

TEST_CASE("class weights (--pos-weight): the loss is the positive-weighted binary cross-entropy", "[train][run]") {
  const auto dir = tasks_test::scratch("posweight");
  const std::string csv = tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", tasks_test::text_rows(60));
  const tasks::Task& task = tasks::task_for(models::ModelKind::kTextClassifier);
  const data::Inputs in = tasks_test::train_inputs(task, {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}});
  const auto data = task.open(in, models::find_model("bilstm-attention"), (dir / "run").string(), 1);
  const auto& entry = models::find_model("bilstm-attention");
  torch::jit::Module m = entry.build(models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes()), nn::Runtime::kNative);
  m.eval();  // no dropout: the same logits twice
  const std::vector<std::int64_t> rows = tasks::all_rows(data->rows());
  const tasks::Batch b = data->batch(rows, tasks::Width::kLongestRow);
  const torch::Tensor weights = data->loss_weights({"3,0.5", ""}, rows);
  const torch::Tensor logits = models::TextClassifier(m).logits(b.inputs.at(0).toTensor()).scores;
  // By hand: -(w y log p + (1 - y) log(1 - p)), averaged.
  const torch::Tensor p = torch::sigmoid(logits), y = b.targets;
  const torch::Tensor expected = -(weights * y * torch::log(p) + (1 - y) * torch::log(1 - p)).mean();
  CHECK(data->loss(m, b, weights).value.item<double>() == Approx(expected.item<double>()).epsilon(1e-5));
  CHECK(data->loss(m, b, {}).value.item<double>() != Approx(expected.item<double>()).epsilon(1e-3));  // it makes a difference
  fs::remove_all(dir);
}

TEST_CASE("one class per row: softmax model, classes kept in model.pt, macro-F1 to monitor, the class predicted", "[train][run][classes]") {
  const auto dir = tasks_test::scratch("classes");
  const auto rows = tasks_test::class_rows(240);
  const std::string csv = tasks_test::write_csv(dir / "t.jsonl", "", {});
  {  // JSON Lines, as HateXplain comes
    std::ofstream f(csv);
    for (const std::string& r : rows) {
      const auto c1 = r.find(','), c2 = r.rfind(',');
      f << nlohmann::json{{"post_id", r.substr(0, c1)}, {"text", r.substr(c1 + 1, c2 - c1 - 1)}, {"label", r.substr(c2 + 1)}}.dump()
        << "\n";
    }
  }
  const std::vector<std::pair<std::string, std::string>> inputs = {{"csv", csv},
                                                                   {"text-column", "text"},
                                                                   {"id-column", "post_id"},
                                                                   {"label-column", "label"},
                                                                   {"classes", "normal,offensive,hatespeech"},
                                                                   {"maxlen", "12"}};
  // The task's recipe for one class per row, under the flags given.
  train::TrainRequest planned;
  planned.model = "bilstm-attention";
  for (const auto& [k, v] : inputs) planned.data.set(k, v, data::Inputs::Origin::kGiven);
  const auto plan = train::planned_config(planned);
  CHECK(plan.at("training").at("batch_size") == 64);
  CHECK(plan.at("training").at("early_stopping_patience") == 2);
  CHECK(plan.at("training").at("monitor") == "val_ovo_auc");
  CHECK(plan.at("training").at("ensemble") == 3);  // a seed ensemble, where the model can be one
  planned.model = "transformer-classifier";
  CHECK(train::planned_config(planned).at("training").at("ensemble") == 1);
  planned.model = "bilstm-attention";
  const auto last = tasks_test::train_run("bilstm-attention", (dir / "run").string(), inputs, {{"embed_dim", 8}, {"lstm_units", 8}},
                                          {{"epochs", 12}, {"batch_size", 16}, {"lr", 0.02}, {"monitor", "val_macro_f1"}});
  CHECK(last.at("val_macro_f1").get<double>() >= 0.9);  // the classes' words are learnt
  CHECK(last.at("val_ovo_auc").get<double>() >= 0.95);
  const auto model = tasks::open_model((dir / "run").string());
  CHECK(model->saved().config.at("model_config").at("output") == "softmax");
  CHECK(model->describe().at("labels").get<std::vector<std::string>>() ==
        std::vector<std::string>{"normal", "offensive", "hatespeech"});  // the order given
  const auto predicted = model->predict({{"thanks good vermin", {}}, {"see talk idiot", {}}, {"page fine", {}}}, 8);
  CHECK(predicted[0].at("class") == "hatespeech");
  CHECK(predicted[1].at("class") == "offensive");
  CHECK(predicted[2].at("class") == "normal");
  double sum = 0;
  for (const auto& [name, p] : predicted[0].at("probabilities").items()) sum += p.get<double>();
  CHECK(sum == Approx(1.0).epsilon(1e-5));  // a softmax
  // evaluate: a probability column per class, then the predicted class; the confusion matrix.
  const std::string val = tasks_test::write_csv(dir / "v.csv", "post_id,text,label", std::vector<std::string>(rows.end() - 30, rows.end()));
  data::Inputs none;
  const auto scored = model->open_csv(val, none, 1);
  const auto e = scored->evaluate(model->module(), tasks::all_rows(scored->rows()), {8, tasks::EvaluateOptions::Detail::kFull});
  CHECK_THAT(e.predictions_csv, Catch::StartsWith("id,normal,offensive,hatespeech,prediction\np210,"));
  CHECK(e.metrics.at("confusion").at("offensive").size() == 3);
  CHECK(e.metrics.at("macro_f1").get<double>() >= 0.9);
  // A class the model does not know is an error naming the file's line and column.
  const std::string odd = tasks_test::write_csv(dir / "odd.csv", "post_id,text,label", {"x1,thanks,normal", "x2,see,spam"});
  CHECK_THROWS_WITH(model->open_csv(odd, none, 1), Catch::Contains("odd.csv:3: column 3 (label): class 'spam' is not one of the model's"));
  fs::remove_all(dir);
}

TEST_CASE("logit adjustment: one class per row's recipe adds the held-out rows' best macro-F1 offsets to model.pt's output bias",
          "[train][run][classes]") {
  const auto dir = tasks_test::scratch("adjust");
  const auto rows = tasks_test::class_rows(240);
  const auto inputs = class_inputs(dir, rows);
  // Barely trained (24 steps): its decisions leave room for the offsets.
  const nlohmann::json sizes = {{"embed_dim", 8}, {"lstm_units", 4}};
  tasks_test::train_run(
      "bilstm-attention", (dir / "run").string(), inputs, sizes,
      {{"epochs", 3}, {"batch_size", 24}, {"lr", 0.01}, {"pretrain_epochs", 0}, {"ensemble", 1}, {"monitor", "val_loss"}});
  const auto model = tasks::open_model((dir / "run").string());
  const auto& a = model->saved().config.at("logit_adjustment");
  REQUIRE(a.is_object());
  CHECK(a.at("offsets").size() == 3);
  CHECK(a.at("offsets").at("hatespeech") == 0.0);  // the first class (sorted) stays: only differences matter
  REQUIRE(a.at("macro_f1_after").get<double>() > a.at("macro_f1_before").get<double>());
  // model.pt decides as the offsets did: its macro-F1 on the held-out rows (the last fifth) is the one recorded.
  CHECK(held_out_macro_f1(*model, dir, rows) == Approx(a.at("macro_f1_after").get<double>()).margin(1e-9));
  // none: model.pt as trained, nothing recorded; 0/1 labels have no classes to adjust.
  tasks_test::train_run("bilstm-attention", (dir / "plain").string(), inputs, sizes,
                        {{"epochs", 1}, {"batch_size", 24}, {"lr", 0.003}, {"pretrain_epochs", 0}, {"logit_adjustment", "none"}});
  CHECK(tasks::open_model((dir / "plain").string())->saved().config.at("logit_adjustment").is_null());
  const std::string binary = tasks_test::write_csv(dir / "b.csv", "id,comment_text,bad,rude", tasks_test::text_rows(60));
  CHECK_THROWS_WITH(tasks_test::train_run("bilstm-attention", (dir / "b").string(), {{"csv", binary}, {"labels", "bad,rude"}}, sizes,
                                          {{"epochs", 1}, {"logit_adjustment", "macro-f1"}}),
                    Catch::Contains("--logit-adjustment macro-f1 does not apply to this data (it takes none"));
  CHECK_THROWS_WITH(train::effective_options(nlohmann::json::object(), {{"logit_adjustment", "max"}}),
                    Catch::Contains("--logit-adjustment must be none, macro-f1 or span-f1, got 'max'"));
  fs::remove_all(dir);
}

TEST_CASE("ensemble runs: members trained side by side from the same start vectors, model.pt their mean, adjusted, resumed",
          "[train][run][ensemble]") {
  const auto dir = tasks_test::scratch("ensemble");
  const auto rows = tasks_test::class_rows(240);
  const auto inputs = class_inputs(dir, rows);
  const nlohmann::json sizes = {{"embed_dim", 8}, {"lstm_units", 4}};
  // Barely trained (one class per row's recipe: vectors from skip-gram, logit adjustment), 3 members.
  tasks_test::train_run(
      "bilstm-attention", (dir / "run").string(), inputs, sizes,
      {{"epochs", 2}, {"batch_size", 24}, {"lr", 0.01}, {"pretrain_epochs", 2}, {"ensemble", 3}, {"monitor", "val_loss"}});
  auto model = tasks::open_model((dir / "run").string());
  const torch::jit::Module module = model->saved().portable;
  const auto members = models::ensemble_members(module);
  REQUIRE(members.size() == 3);
  CHECK(model->saved().config.at("training").at("ensemble") == 3);
  CHECK_THAT(analyses::summarize((dir / "run").string(), nlohmann::json::object()),
             Catch::Contains("An ensemble of 3 such models (attn train --ensemble)"));
  // each member its own weights; the n-gram rows the skip-gram wrote are where every member started
  CHECK_FALSE(torch::equal(members[0].attr("embedding").toTensor(), members[1].attr("embedding").toTensor()));
  CHECK(model->saved().config.at("embeddings").at("words_found").get<int>() > 0);
  // the logit adjustment moved the ensemble's bias: model.pt decides as recorded on the held-out rows
  const auto& a = model->saved().config.at("logit_adjustment");
  REQUIRE(a.is_object());
  CHECK(held_out_macro_f1(*model, dir, rows) == Approx(a.at("macro_f1_after").get<double>()).margin(1e-9));
  // probabilities: the members' mean, moved by the offsets
  torch::Tensor offsets = models::output_bias(models::find_model("bilstm-attention"), module);
  const torch::Tensor ids = torch::tensor({{3, 4, 5, 0}}, torch::kInt64);
  torch::Tensor mean = torch::zeros({1, 3});
  for (const auto& m : members)
    mean += torch::softmax(torch::jit::Module(m).run_method("logits", ids).toTupleRef().elements()[0].toTensor(), 1) / 3;
  const torch::Tensor expected = torch::softmax(torch::log(mean) + offsets, 1);
  CHECK(torch::allclose(models::TextClassifier(module).forward(ids).scores, expected, 1e-5, 1e-6));
  // resume: more epochs from the checkpoint of every member; then the ensemble has learnt the classes
  {
    std::atomic<bool> stop{false};
    train::TrainingRun resumed = train::TrainingRun::resume((dir / "run").string(), {{"epochs", 10}}, nullptr);
    REQUIRE(resumed.train(stop, nullptr, nullptr));
  }
  model = tasks::open_model((dir / "run").string());
  CHECK(held_out_macro_f1(*model, dir, rows) >= 0.9);
  // only text classifiers; at least one member
  CHECK_THROWS_WITH(tasks_test::train_run("feature-attention", (dir / "f").string(), {{"csv", feature_csv(dir, 30)}},
                                          nlohmann::json::object(), {{"epochs", 1}, {"ensemble", 2}}),
                    Catch::Contains("--ensemble: feature-attention is not a text classifier"));
  CHECK_THROWS_WITH(train::effective_options(nlohmann::json::object(), {{"ensemble", 0}}),
                    Catch::Contains("--ensemble must be in [1, 64], got 0"));
  fs::remove_all(dir);
}

TEST_CASE("every metric a validation names can be monitored, with a one-row validation too", "[train][run][monitor]") {
  const auto dir = tasks_test::scratch("monitor");
  const std::string multi_label = tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", tasks_test::text_rows(60));
  const std::string classes = tasks_test::write_csv(dir / "c.csv", "post_id,text,label", tasks_test::class_rows(60));
  const std::string one_row = tasks_test::write_csv(dir / "v.csv", "id,comment_text,bad,rude", {"v1,thanks good,0,1"});
  const std::vector<std::vector<std::pair<std::string, std::string>>> setups = {
      {{"csv", multi_label}, {"labels", "bad,rude"}, {"maxlen", "12"}},
      {{"csv", multi_label}, {"labels", "bad,rude"}, {"maxlen", "12"}, {"val-csv", one_row}},  // its AUCs are null
      {{"csv", classes}, {"text-column", "text"}, {"label-column", "label"}, {"maxlen", "12"}},
  };
  int run = 0;
  for (const auto& inputs : setups) {
    const tasks::Task& task = tasks::task_for(models::ModelKind::kTextClassifier);
    const data::Inputs in = tasks_test::train_inputs(task, inputs);
    const auto names = task.open(in, models::find_model("bilstm-attention"), (dir / "probe").string(), 1)->metric_names();
    CHECK(std::find(names.begin(), names.end(), "mean_auc") != names.end());
    for (const std::string& name : names) {
      INFO("monitor val_" << name << ", setup " << run);
      const auto last = tasks_test::train_run(
          "bilstm-attention", (dir / ("run" + std::to_string(run++))).string(), inputs, {{"embed_dim", 4}, {"lstm_units", 2}},
          {{"epochs", 2}, {"batch_size", 32}, {"early_stopping_patience", 1}, {"monitor", "val_" + name}});
      CHECK(last.at("epoch") >= 1);
    }
  }
  fs::remove_all(dir);
}
