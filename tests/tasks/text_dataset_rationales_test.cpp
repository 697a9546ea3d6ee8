// Attention trained on human rationales (tasks/text_dataset_rationales.cpp): the marked words' tokens
// as explain aligns them, the attention each asks for, rationales.json kept for --resume, the loss
// and its gradient, bad flags and files refused.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"
#include "attn/models/saved_model.h"
#include "attn/tasks/text_classification.h"
#include "tasks/classifier.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE(
    "attention trained on rationales: the marked words' tokens as explain aligns them, the loss and its gradient, native = "
    "portable = finite differences",
    "[tasks][text][rationales]") {
  const auto dir = scratch("rationales");
  // Row 1's marked word is two tokens; row 2 has no rationale; row 3's marked word is cut by maxlen
  // (truncating 'pre' keeps the end); row 4's marked word is dropped by the tokenizer's filters.
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad",
                                    {"a,\"you are a STUPID-idiot, see\",1", "b,thanks for the edit,0",
                                     "c,idiot one two three four five six seven,1", "d,\"see ... you later, are you\",1"});
  const std::string spans = write_csv(dir / "spans.csv", "spans,text",
                                      {"\"[10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]\",\"you are a STUPID-idiot, see\"",
                                       "\"[0, 1]\",idiot one two three four five six seven", "\"[4, 5, 6]\",\"see ... you later, are you\"",
                                       "\"[0]\",a text of no training row"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const data::Inputs in =
      train_inputs(task, {{"csv", csv}, {"labels", "bad"}, {"maxlen", "6"}, {"rationales", spans}, {"rationale-weight", "2"}});
  const auto data = task.open(in, entry, (dir / "run").string(), 1);
  const tasks::Batch b = data->batch({0, 1, 2, 3}, tasks::Width::kLongestRow);
  REQUIRE(b.attention_targets.defined());
  const auto at = [&](std::int64_t r) {
    const torch::Tensor g = b.attention_targets[r];
    return std::vector<float>(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  };
  CHECK(at(0) == std::vector<float>{0, 0, 0, 0.5f, 0.5f, 0});  // you are a [stupid idiot] see
  CHECK(at(1) == std::vector<float>(6, 0.0f));                 // no rationale
  CHECK(at(2) == std::vector<float>(6, 0.0f));                 // "idiot" is beyond maxlen
  CHECK(at(3) == std::vector<float>(6, 0.0f));                 // "..." has no token
  const auto report = nlohmann::json::parse(io::read_file((dir / "run" / "data" / "prepare.json").string()))["rationales"];
  CHECK(report["rows"] == 3);
  CHECK(report["rows_trained"] == 1);
  CHECK(report["rationales_unused"] == 1);
  CHECK(report["marked_words_not_read"] == 2);
  // A resumed run's data (Task::reopen) has them too.
  io::write_file_atomic((dir / "run" / "tokenizer.json").string(), data->files().at("tokenizer.json"));
  const auto again = task.reopen(data->data_config(), (dir / "run").string(), 1);
  CHECK(torch::equal(again->batch({0, 1, 2, 3}, tasks::Width::kLongestRow).attention_targets, b.attention_targets));

  // The loss: the classification's plus lambda x the mean over rows of -sum_t g_t log a_t.
  const nlohmann::json config = models::fit_config(entry, {{"embed_dim", 8}, {"lstm_units", 4}}, data->sizes());
  torch::manual_seed(5);
  torch::jit::Module native = entry.build(config, nn::Runtime::kNative);
  native.eval();  // no dropout: the same function as the portable build's
  const torch::Tensor ids = b.inputs.at(0).toTensor();
  const models::Scored out = models::TextClassifier(native).logits(ids);
  const tasks::Loss loss = data->loss(native, b, {});
  const double classification = tasks::binary_loss(out.scores, b.targets, {}).value.item<double>();
  const double by_hand = -(0.5 * std::log(out.attention[0][3].item<double>()) + 0.5 * std::log(out.attention[0][4].item<double>())) / 4;
  CHECK(loss.value.item<double>() == Approx(classification + 2 * by_hand).epsilon(1e-5));
  // Its gradient through attn's kernels (the attention's own backward pass) is the portable build's,
  // and that is the finite differences' of the loss in double precision.
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
  for (const auto& p : native.named_parameters()) names.push_back(p.name), params.push_back(p.value);
  const std::vector<torch::Tensor> g_native = torch::autograd::grad({loss.value}, params);
  torch::jit::Module portable = entry.build(config, nn::Runtime::kPortable);
  models::copy_weights(native, portable);
  portable.to(torch::kDouble);
  portable.eval();
  tasks::Batch d = b;
  d.targets = b.targets.to(torch::kDouble);
  d.attention_targets = b.attention_targets.to(torch::kDouble);
  std::vector<torch::Tensor> p_params;
  for (const auto& p : portable.named_parameters()) p_params.push_back(p.value);
  const torch::Tensor l_portable = data->loss(portable, d, {}).value;
  CHECK(l_portable.item<double>() == Approx(loss.value.item<double>()).epsilon(1e-5));
  const std::vector<torch::Tensor> g_portable = torch::autograd::grad({l_portable}, p_params);
  for (std::size_t i = 0; i < params.size(); ++i) {
    INFO(names[i]);
    CHECK(torch::allclose(g_native[i].to(torch::kDouble), g_portable[i], 1e-3, 1e-5));
  }
  torch::NoGradGuard no_grad;
  int checked = 0;
  for (std::size_t i = 0; i < p_params.size(); ++i) {
    if (names[i].find("attention") == std::string::npos) continue;
    torch::Tensor flat = p_params[i].view(-1);
    for (std::int64_t k = 0; k < std::min<std::int64_t>(flat.numel(), 4); ++k) {
      const double x = flat[k].item<double>(), h = 1e-6;
      flat[k] = x + h;
      const double up = data->loss(portable, d, {}).value.item<double>();
      flat[k] = x - h;
      const double down = data->loss(portable, d, {}).value.item<double>();
      flat[k] = x;
      INFO(names[i] << "[" << k << "]");
      CHECK((up - down) / (2 * h) == Approx(g_portable[i].view(-1)[k].item<double>()).margin(1e-7).epsilon(1e-5));
      ++checked;
    }
  }
  CHECK(checked >= 4);
}

TEST_CASE("attention trained on rationales: --rationale-target spans gives each marked span the same share, kept for --resume",
          "[tasks][text][rationales]") {
  const auto dir = scratch("rationale_target");
  // Two marked spans: "stupid idiot" (two words) and "see" (one); "you" between them is not marked.
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad", {"a,a stupid idiot you see,1", "b,thanks for the edit,0"});
  const std::string spans =
      write_csv(dir / "spans.csv", "spans,text", {"\"[2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 19, 20, 21]\",a stupid idiot you see"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto targets = [&](const std::string& run, std::vector<std::pair<std::string, std::string>> flags) {
    flags.insert(flags.end(), {{"csv", csv}, {"labels", "bad"}, {"maxlen", "5"}, {"rationales", spans}});
    const auto data = task.open(train_inputs(task, flags), entry, (dir / run).string(), 1);
    const torch::Tensor g = data->batch({0}, tasks::Width::kLongestRow).attention_targets[0];
    // A resumed run's data reads the same target from config.json's data block.
    io::write_file_atomic((dir / run / "tokenizer.json").string(), data->files().at("tokenizer.json"));
    const auto again = task.reopen(data->data_config(), (dir / run).string(), 1);
    CHECK(torch::equal(again->batch({0}, tasks::Width::kLongestRow).attention_targets[0], g));
    if (run == "words") {  // rationales.json as attn wrote it before it kept the spans (a row's entries in one list) reads alike
      const std::string marks = (dir / run / "data" / "rationales.json").string();
      CHECK(nlohmann::json::parse(io::read_file(marks))["rows"][0][1] == nlohmann::json::parse("[[1, 2], [4]]"));
      io::write_file_atomic(marks, R"({"rows": [[0, [1, 2, 4]]]})");
      const auto old = task.reopen(data->data_config(), (dir / run).string(), 1);
      CHECK(torch::equal(old->batch({0}, tasks::Width::kLongestRow).attention_targets[0], g));
    }
    return std::vector<float>(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  };
  const std::vector<float> words = targets("words", {});
  CHECK_THAT(words, Catch::Matchers::Approx(std::vector<float>{0, 1 / 3.0f, 1 / 3.0f, 0, 1 / 3.0f}));  // HateXplain's: each word alike
  CHECK(targets("words2", {{"rationale-target", "words"}}) == words);                                  // the default
  CHECK_THAT(targets("spans", {{"rationale-target", "spans"}}), Catch::Matchers::Approx(std::vector<float>{0, 0.25f, 0.25f, 0, 0.5f}));
  CHECK_THROWS_WITH(targets("bad", {{"rationale-target", "tokens"}}),
                    Catch::Contains("--rationale-target: 'tokens' is not words or spans"));
}

TEST_CASE("attention trained on rationales: bad flags and files refused, naming them", "[tasks][text][rationales]") {
  const auto dir = scratch("rationales_bad");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad", {"a,you are stupid,1", "b,thanks,0"});
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto open = [&](std::vector<std::pair<std::string, std::string>> flags) {
    flags.insert(flags.end(), {{"csv", csv}, {"labels", "bad"}});
    return task.open(train_inputs(task, flags), entry, (dir / "run").string(), 1);
  };
  const std::string spans = write_csv(dir / "spans.csv", "spans,text", {"\"[8]\",you are stupid"});
  CHECK_NOTHROW(open({{"rationales", spans}}));
  CHECK_THROWS_WITH(open({{"rationale-weight", "2"}}), Catch::Contains("--rationale-weight applies with --rationales"));
  CHECK_THROWS_WITH(open({{"rationale-target", "spans"}}), Catch::Contains("--rationale-target applies with --rationales"));
  CHECK_THROWS_WITH(open({{"rationales", spans}, {"rationale-weight", "-1"}}), Catch::Contains("--rationale-weight: '-1'"));
  CHECK_THROWS_WITH(open({{"rationales", spans}, {"rationale-docs", "d.jsonl"}}),
                    Catch::Contains("--rationale-docs is for ERASER's annotations"));
  const std::string other = write_csv(dir / "other.csv", "spans,text", {"\"[0]\",something else"});
  CHECK_THROWS_WITH(open({{"rationales", other}}), Catch::Contains("no text of " + other + " is a text of " + csv));
  // ERASER's words are the document split on single spaces; a tab inside one cannot line up.
  const std::string tabbed = write_csv(dir / "tabbed.csv", "id,comment_text,bad", {"a,\"you are\tstupid\",1", "b,thanks,0"});
  {
    std::ofstream(dir / "docs.jsonl") << R"({"docid": "a", "document": "you are\tstupid"})"
                                      << "\n";
    std::ofstream(dir / "ann.jsonl")
        << R"({"annotation_id": "a", "classification": "toxic", "evidences": [[{"docid": "a", "start_token": 1, "end_token": 2}]]})"
        << "\n";
  }
  const data::Inputs in = train_inputs(task, {{"csv", tabbed}, {"labels", "bad"}, {"rationales", (dir / "ann.jsonl").string()}});
  CHECK_THROWS_WITH(task.open(in, entry, (dir / "run2").string(), 1), Catch::Contains("ann.jsonl:1: the rationale's words do not line up"));
  const data::Inputs prepared = train_inputs(task, {{"data", (dir / "run" / "data").string()}, {"rationales", spans}});
  CHECK_THROWS_WITH(task.open(prepared, entry, (dir / "run3").string(), 1), Catch::Contains("--rationales re-reads the texts"));
}
