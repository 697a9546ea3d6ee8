// A run's word embedding started from word vectors or from skip-gram on its own texts
// (lib/src/train/word_vectors.h), through training runs: mapped through the tokenizer, frozen,
// coverage reported, the recipe's pretraining and its vectors.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include <zlib.h>

#include "attn/data/skipgram.h"
#include "attn/models/ensemble.h"
#include "attn/models/saved_model.h"
#include "attn/train/run.h"
#include "train_test_util.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

void write_gz(const fs::path& path, const std::string& text) {
  gzFile f = gzopen(path.string().c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

}  // namespace

TEST_CASE("pretrained word vectors: mapped through the tokenizer (another case too), frozen, coverage reported",
          "[train][run][embeddings]") {
  const auto dir = tasks_test::scratch("vectors");
  const std::string csv = tasks_test::write_csv(dir / "t.csv", "id,comment_text,bad,rude", tasks_test::text_rows(120));
  std::string vectors = "5 8\n";
  const std::vector<std::pair<std::string, float>> words = {
      {"thanks", 0.5f}, {"Stupid", -0.25f}, {"good", 1.0f}, {"zebra", 2.0f}, {"edit", 0.125f}};
  for (const auto& [w, v] : words) {
    vectors += w;
    for (int i = 0; i < 8; ++i) vectors += " " + std::to_string(v + 0.01f * static_cast<float>(i));
    vectors += "\n";
  }
  write_gz(dir / "vectors.vec.gz", vectors);
  const std::vector<std::pair<std::string, std::string>> inputs = {{"csv", csv}, {"labels", "bad,rude"}, {"maxlen", "12"}};
  tasks_test::train_run(
      "bilstm-attention", (dir / "frozen").string(), inputs, {{"embed_dim", 8}, {"lstm_units", 4}},
      {{"epochs", 1}, {"batch_size", 16}, {"embeddings", (dir / "vectors.vec.gz").string()}, {"freeze_embeddings", true}});
  const models::SavedModel saved = models::load_model((dir / "frozen").string(), nn::Runtime::kPortable);
  const auto& coverage = saved.config.at("embeddings");
  CHECK(coverage.at("words_found") == 4);  // thanks, stupid (from "Stupid"), good, edit; zebra is not in the data
  CHECK(coverage.at("found_as_other_case") == 1);
  CHECK(coverage.at("words") == 11);
  CHECK(coverage.at("tokens_found").get<double>() > 0.3 * coverage.at("tokens").get<double>());
  const auto tokenizer = text::Tokenizer::from_json(saved.file("tokenizer.json"));
  const torch::Tensor table = saved.module.attr("embedding").toTensor();
  const auto row = [&](const std::string& w) { return table[*tokenizer.word_index(w)]; };
  CHECK(row("stupid")[0].item<float>() == -0.25f);
  CHECK(row("edit")[7].item<float>() == Approx(0.195f));
  CHECK(torch::allclose(row("thanks"), 0.5f + 0.01f * torch::arange(8, torch::kFloat32)));  // frozen through training
  // Not frozen: the vectors are a start, and training moves them.
  tasks_test::train_run("bilstm-attention", (dir / "tuned").string(), inputs, {{"embed_dim", 8}, {"lstm_units", 4}},
                        {{"epochs", 1}, {"batch_size", 16}, {"embeddings", (dir / "vectors.vec.gz").string()}});
  const models::SavedModel tuned = models::load_model((dir / "tuned").string(), nn::Runtime::kPortable);
  CHECK_FALSE(torch::allclose(tuned.module.attr("embedding").toTensor()[*tokenizer.word_index("thanks")],
                              0.5f + 0.01f * torch::arange(8, torch::kFloat32)));
  // The model's size must match the file's.
  CHECK_THROWS_WITH(tasks_test::train_run("bilstm-attention", (dir / "wide").string(), inputs, {{"embed_dim", 16}, {"lstm_units", 4}},
                                          {{"epochs", 1}, {"embeddings", (dir / "vectors.vec.gz").string()}}),
                    Catch::Contains("the vectors have 8 dimensions, the model's embedding 16"));
  fs::remove_all(dir);
}

TEST_CASE("word vectors pretrained on the training file's own texts: one class per row's recipe, the skip-gram's vectors, every run alike",
          "[train][run][embeddings]") {
  const auto dir = tasks_test::scratch("pretrain");
  const auto rows = tasks_test::class_rows(240);
  const std::string csv = tasks_test::write_csv(dir / "t.csv", "post_id,text,label", rows);
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"csv", csv},     {"text-column", "text"},  {"id-column", "post_id"}, {"label-column", "label"},
      {"maxlen", "12"}, {"subword-buckets", "64"}};
  train::TrainRequest planned;
  planned.model = "bilstm-attention";
  for (const auto& [k, v] : inputs) planned.data.set(k, v, data::Inputs::Origin::kGiven);
  CHECK(train::planned_config(planned).at("training").at("pretrain_epochs") == 20);  // the recipe
  planned.training = {{"embeddings", "glove.txt"}};
  CHECK(train::planned_config(planned).at("training").at("pretrain_epochs") == 0);  // the user's vectors instead
  planned.training["pretrain_epochs"] = 5;
  CHECK_THROWS_WITH(train::planned_config(planned), Catch::Contains("give one of --embeddings and --pretrain-epochs"));
  // A large file gets fewer passes: 8 million words at most, one pass at least.
  train::TrainOptions t;
  t.pretrain_epochs = 20;
  CHECK(train::pretrain_passes(t, 10'000) == 20);
  CHECK(train::pretrain_passes(t, 1'000'000) == 8);
  CHECK(train::pretrain_passes(t, 50'000'000) == 1);
  t.pretrain_epochs = 0;
  CHECK(train::pretrain_passes(t, 10) == 0);

  // A step of 1e-9 leaves the weights where pretraining put them.
  const nlohmann::json sizes = {{"embed_dim", 8}, {"lstm_units", 4}};
  const nlohmann::json training = {{"epochs", 1}, {"lr", 1e-9}, {"seed", 3}};
  tasks_test::train_run("bilstm-attention", (dir / "a").string(), inputs, sizes, training);
  const models::SavedModel a = models::load_model((dir / "a").string(), nn::Runtime::kPortable);
  const auto& pretrained = a.config.at("embeddings").at("pretrained");
  CHECK(pretrained.at("texts") == 240);
  CHECK(pretrained.at("epochs") == 20);
  CHECK(a.config.at("embeddings").at("words_found") == a.config.at("embeddings").at("words"));  // every word is seen twice
  // What skip-gram learns from the texts with the model's sizes and n-gram hash, on one thread.
  std::vector<std::string> texts;
  for (const std::string& r : rows) texts.push_back(r.substr(r.find(',') + 1, r.rfind(',') - r.find(',') - 1));
  data::SkipgramOptions o;
  o.dim = 8;
  o.buckets = 64;
  o.epochs = 20;
  o.min_count = 2;
  o.seed = 4;
  const data::SkipgramVectors learnt = data::train_skipgram(texts, o);
  const data::SubwordRows own = data::subword_rows_of(learnt, {"vermin", "thanks"});
  const auto tokenizer = text::Tokenizer::from_json(a.file("tokenizer.json"));
  // (one class per row's recipe trains a seed ensemble: every member starts from them)
  const std::vector<torch::jit::Module> members = models::ensemble_members(a.module);
  REQUIRE(members.size() == 3);
  for (const torch::jit::Module& m : members) {
    const torch::Tensor table = m.attr("embedding").toTensor(), ngrams = m.attr("subword_embedding").toTensor();
    for (const char* w : {"vermin", "thanks"})
      CHECK(torch::allclose(table[*tokenizer.word_index(w)], torch::tensor(own.words.at(w)), 1e-4, 1e-6));
    CHECK(torch::allclose(ngrams.slice(0, 1), torch::from_blob(const_cast<float*>(own.ngrams.data()), {64, 8}), 1e-4, 1e-6));
  }
  // The same run again: the same weights, bit for bit.
  tasks_test::train_run("bilstm-attention", (dir / "b").string(), inputs, sizes, training);
  const models::SavedModel b = models::load_model((dir / "b").string(), nn::Runtime::kPortable);
  std::map<std::string, torch::Tensor> first;
  for (const auto& p : a.module.named_parameters(true)) first[p.name] = p.value;
  for (const auto& p : b.module.named_parameters(true)) CHECK(torch::equal(p.value, first.at(p.name)));
  // Prepared data has no texts left to learn from.
  CHECK_THROWS_WITH(tasks_test::train_run("bilstm-attention", (dir / "c").string(), {{"data", (dir / "a" / "data").string()}}, sizes,
                                          {{"epochs", 1}, {"pretrain_epochs", 2}}),
                    Catch::Contains("--pretrain-epochs learns from the texts of a --csv"));
  fs::remove_all(dir);
}
