// Text classifiers' data with subwords (tasks/text_dataset_subwords.cpp): words misspelt on purpose
// (--misspell) read by their n-grams and recorded, and a reopened data directory reading the same rows.
#include "attn/io/atomic_file.h"
#include "attn/models/registry.h"
#include "attn/tasks/text_classification.h"
#include "tasks_test_util.h"

using namespace attn;
using namespace tasks_test;

TEST_CASE("subwords: --misspell's words are new words read by their n-grams, kept for --resume", "[tasks][text][subwords]") {
  const auto dir = scratch("misspelt_subwords");
  const std::string csv = write_csv(dir / "train.csv", "id,comment_text,bad,rude", text_rows(40));
  const tasks::Task& task = tasks::text_classification();
  const auto& entry = models::find_model("bilstm-attention");
  const auto data = task.open(train_inputs(task, {{"csv", csv},
                                                  {"labels", "bad,rude"},
                                                  {"subwords", ""},
                                                  {"subword-buckets", "64"},
                                                  {"misspell", "1"},
                                                  {"misspell-edits", "repeat"}}),
                              entry, (dir / "run").string(), 1);
  const auto report = nlohmann::json::parse(io::read_file((dir / "run" / "data" / "prepare.json").string()));
  CHECK(report.at("subwords").at("buckets") == 64);
  CHECK(report.at("misspelt").at("rate") == 1.0);
  CHECK(report.at("misspelt").at("edits") == nlohmann::json::array({"repeat"}));
  CHECK(report.at("misspelt").at("words_changed").get<std::int64_t>() > 0);  // every word of 4+ letters, at rate 1
  CHECK(report.at("misspelt").at("words_changed") == report.at("misspelt").at("words_of_4_letters"));
  CHECK(report.at("subwords").at("new_words").get<std::int64_t>() > 0);  // the misspellings: not the tokenizer's words
  const std::string words = (dir / "run" / "data" / "subword_words.json").string();
  REQUIRE(fs::exists(words));

  // Reopened (what --resume does), every input of every row is the same: the new words get their ids again.
  io::write_file_atomic((dir / "run" / "tokenizer.json").string(), data->files().at("tokenizer.json"));
  const std::vector<std::int64_t> rows = tasks::all_rows(data->rows());
  const tasks::Batch b = data->batch(rows, tasks::Width::kLongestRow);
  const tasks::Batch again = task.reopen(data->data_config(), (dir / "run").string(), 1)->batch(rows, tasks::Width::kLongestRow);
  REQUIRE(again.inputs.size() == b.inputs.size());
  for (std::size_t i = 0; i < b.inputs.size(); ++i) CHECK(torch::equal(again.inputs[i].toTensor(), b.inputs[i].toTensor()));

  // A list of words that are not the run's new words is refused, naming the file.
  io::write_file_atomic(words, R"({"words": ["thanks"]})");
  CHECK_THROWS_WITH(task.reopen(data->data_config(), (dir / "run").string(), 1),
                    Catch::Contains(words + ": word 0 ('thanks') is not a new word of the run's tokenizer"));
  io::write_file_atomic(words, R"({"words": 3})");
  CHECK_THROWS_WITH(task.reopen(data->data_config(), (dir / "run").string(), 1), Catch::Contains(words + ": not a list of words"));
  fs::remove_all(dir);
}
