// Data-parallel training: two or three workers (threads, each with its own c10d TCPStore client and
// Gloo group) ending where one process ends, with every gradient exchange, seq2seq and
// hierarchical models, a resume mid-epoch, and a worker whose data differ.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <torch/script.h>
#include <torch/utils.h>
#include <catch2/catch.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "../parallel/parallel_test_util.h"
#include "attn/data/prepare.h"
#include "attn/data/toxic_corpus.h"
#include "attn/models/registry.h"
#include "attn/parallel/workers.h"
#include "attn/tasks/task.h"
#include "attn/tasks/text_classification.h"
#include "attn/train/trainer.h"
#include "tasks/text_dataset.h"  // (the tasks layer's own: text_dataset)

using namespace attn;
using attn::testing::connected_workers;
using attn::testing::two_workers;

namespace {

/// The text task's data of the CSV that `write` writes (Jigsaw's columns), padded to 60 words.
std::unique_ptr<tasks::Dataset> text_data(const std::function<void(std::ostream&)>& write) {
  const auto dir = std::filesystem::temp_directory_path() / ("attn_distributed_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string csv = (dir / "comments.csv").string();
  {
    std::ofstream f(csv, std::ios::binary);
    write(f);
  }
  data::PrepareOptions o;
  o.csv = csv;
  o.pad.maxlen = 60;
  auto prepared = data::prepare_csv(o);
  std::filesystem::remove_all(dir);
  tasks::TextDataConfig config;
  config.labels = prepared.data.label_names;
  return tasks::text_dataset(std::move(prepared.data), std::move(prepared.tokenizer), config);
}

std::unique_ptr<tasks::Dataset> toxic_data(std::int64_t rows) {
  return text_data([&](std::ostream& f) { data::write_toxic_corpus(f, data::ToxicCorpusOptions{rows, 3, 0.0}); });
}

/// `rows` comments of 30 words drawn evenly from 5,000, and 6 labels: batches whose rows share few words.
std::unique_ptr<tasks::Dataset> scattered_words_data(std::int64_t rows) {
  return text_data([&](std::ostream& f) {
    f << "id,comment_text,toxic,severe_toxic,obscene,threat,insult,identity_hate\n";
    std::uint32_t x = 12345;
    for (std::int64_t r = 0; r < rows; ++r) {
      f << r << ",\"";
      for (int w = 0; w < 30; ++w) {
        x = x * 1664525U + 1013904223U;
        f << (w ? " " : "") << "w" << (x >> 8) % 5000;
      }
      f << "\"," << r % 2 << ",0," << r % 3 % 2 << ",0,0,0\n";
    }
  });
}

/// Pairs of numbers ("n" -> "7n mod 1000"), read by the seq2seq task, and its model, small.
std::unique_ptr<tasks::Dataset> number_pairs(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::string csv = (dir / "numbers.csv").string();
  {
    std::ofstream f(csv, std::ios::binary);
    f << "n,m\n";
    for (int i = 0; i < 120; ++i) f << i * 37 % 5000 << "," << i * 7 % 1000 << "\n";
  }
  const tasks::Task& task = tasks::task_for(models::ModelKind::kSeq2Seq);
  const data::Inputs in = tasks_test::train_inputs(task, {{"csv", csv}, {"source-column", "n"}, {"target-column", "m"}});
  return task.open(in, models::find_model("seq2seq-attention"), (dir / "run").string(), 1);
}

torch::jit::Module small_seq2seq(const tasks::Dataset& data) {
  torch::manual_seed(6);
  const auto& entry = models::find_model("seq2seq-attention");
  return entry.build(models::fit_config(entry, {{"units", 8}, {"embed_dim", 4}}, data.sizes()), nn::Runtime::kNative);
}

/// The seed model, small, without dropout (so that the workers' result is one process's).
torch::jit::Module small_model(int lstm_units = 4) {
  torch::manual_seed(5);
  const auto& entry = models::find_model("bilstm-attention");
  return entry.build(models::resolve_config(entry, {{"num_words", 20000},
                                                    {"embed_dim", 8},
                                                    {"lstm_units", lstm_units},
                                                    {"spatial_dropout", 0.0},
                                                    {"lstm_dropout", 0.0},
                                                    {"recurrent_dropout", 0.0}}),
                     nn::Runtime::kNative);
}

std::vector<torch::Tensor> parameters_of(torch::jit::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.named_parameters(true)) out.push_back(p.value.detach().clone());
  return out;
}

/// Training options of `epochs` passes in batches of `batch_size` rows, drawn from `seed`.
train::TrainOptions training(int epochs, std::int64_t batch_size, std::uint64_t seed) {
  train::TrainOptions o;
  o.epochs = epochs;
  o.batch_size = batch_size;
  o.seed = seed;
  return o;
}

/// What one of two workers ends with: its weights, its last epoch, its validation metrics.
struct WorkerRun {
  std::vector<torch::Tensor> parameters;
  train::EpochRecord last;
  nlohmann::ordered_json validation;
};

/// Trains `model` in this process alone: what the workers must end with.
WorkerRun train_alone(torch::jit::Module model, const tasks::Dataset& data, const train::TrainOptions& o) {
  WorkerRun run;
  train::Trainer t(model, data, nullptr, o);
  const std::atomic<bool> no_stop{false};
  REQUIRE(t.run(no_stop, nullptr, [&](const train::EpochRecord& e) { run.last = e; }));
  run.parameters = parameters_of(t.model());
  run.validation = t.validate();
  return run;
}

/// Trains models[rank] on as many connected workers as there are models, with the same data and options.
std::vector<WorkerRun> train_on_workers(std::vector<torch::jit::Module>& models, const tasks::Dataset& data, const train::TrainOptions& o,
                                        const std::string& word_embedding = "") {
  std::vector<WorkerRun> runs(models.size());
  const std::atomic<bool> no_stop{false};
  const auto errors =
      connected_workers(static_cast<int>(models.size()), std::chrono::seconds(60), [&](int rank, parallel::Workers& workers) {
        const auto r = static_cast<std::size_t>(rank);
        train::Trainer t(models[r], data, nullptr, o, &workers, word_embedding);
        if (!t.run(no_stop, nullptr, [&](const train::EpochRecord& e) { runs[r].last = e; })) throw std::runtime_error("stopped");
        runs[r].parameters = parameters_of(t.model());
        runs[r].validation = t.validate();
      });
  for (const std::string& e : errors) REQUIRE(e == "");
  return runs;
}

}  // namespace

TEST_CASE("two workers (c10d/Gloo) end with the weights one process gets at the same global batch", "[train][distributed]") {
  torch::set_num_threads(1);
  const auto data = toxic_data(400);
  train::TrainOptions o = training(2, 50, 3);  // shares of 25; the last batch of an epoch is smaller
  o.clip_norm = 1.0;

  const WorkerRun single = train_alone(small_model(), *data, o);
  const auto& expected = single.parameters;
  const train::EpochRecord& single_last = single.last;
  const auto& expected_val = single.validation;

  // Built here: the global generator is not for two threads at once.
  std::vector<torch::jit::Module> models{small_model(), small_model()};
  {
    torch::NoGradGuard no_grad;  // other initial weights on rank 1: rank 0's are broadcast
    for (const auto& p : models[1].parameters()) p.add_(1.0);
  }
  const auto runs = train_on_workers(models, *data, o);
  REQUIRE(runs[0].parameters.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(runs[0].parameters[i].equal(runs[1].parameters[i]));  // every worker holds the same weights
    CHECK((runs[0].parameters[i] - expected[i]).abs().max().item<double>() <= 1e-5);
  }
  // The epoch's figures are the whole batch's: each row counted once, by one worker.
  for (const auto& run : runs) {
    const auto& r = run.last;
    CHECK(r.train_rows == single_last.train_rows);
    CHECK(r.train_tokens <= single_last.train_tokens);  // positions incl. padding: each share is trimmed to its own longest row
    CHECK(r.loss == Approx(single_last.loss).margin(1e-6));
    CHECK(r.accuracy == Approx(single_last.accuracy).margin(1e-9));
  }
  CHECK(runs[0].validation["loss"].get<double>() == Approx(expected_val["loss"].get<double>()).margin(1e-5));
  CHECK(runs[0].validation["mean_auc"].get<double>() == Approx(expected_val["mean_auc"].get<double>()).margin(1e-4));
}

TEST_CASE("two workers sum only the embedding rows a batch touched: the dense exchange's weights for a fraction of its bytes",
          "[train][distributed][sparse]") {
  torch::set_num_threads(1);
  const auto data = toxic_data(400);
  train::TrainOptions o = training(2, 50, 3);
  o.clip_norm = 1.0;  // the global norm sees every row's gradient, zero or not
  std::vector<torch::jit::Module> sparse_models{small_model(), small_model()}, by_ids_models{small_model(), small_model()},
      dense_models{small_model(), small_model()};
  // The touched rows found in the gradients, or known from the batch's word ids.
  const auto sparse = train_on_workers(sparse_models, *data, o);
  const auto by_ids = train_on_workers(by_ids_models, *data, o, models::find_model("bilstm-attention").word_embedding);
  o.sparse_gradients = false;
  const auto dense = train_on_workers(dense_models, *data, o);
  REQUIRE(sparse[0].parameters.size() == dense[0].parameters.size());
  std::int64_t numel = 0;
  for (std::size_t i = 0; i < dense[0].parameters.size(); ++i) {
    INFO("parameter " << i);
    CHECK((sparse[0].parameters[i] - dense[0].parameters[i]).abs().max().item<double>() <= 1e-6);
    CHECK((by_ids[0].parameters[i] - dense[0].parameters[i]).abs().max().item<double>() <= 1e-6);
    // Two workers gather each other's share rows and add a + b, the very bits the allreduce of the
    // rows some worker touched gives.
    CHECK(by_ids[0].parameters[i].equal(sparse[0].parameters[i]));
    CHECK(sparse[0].parameters[i].equal(sparse[1].parameters[i]));
    CHECK(by_ids[0].parameters[i].equal(by_ids[1].parameters[i]));
    numel += dense[0].parameters[i].numel();
  }
  // Adam's moments decay on every row either way (the gradient it sees is the same dense one).
  CHECK(sparse[0].validation["loss"].get<double>() == Approx(dense[0].validation["loss"].get<double>()).margin(1e-6));
  CHECK(by_ids[0].validation["loss"].get<double>() == Approx(dense[0].validation["loss"].get<double>()).margin(1e-6));
  // Bytes per step: the dense exchange sends every parameter's gradient (float32) and the stop flag
  // with them, in one collective; the sparse one a byte per table row (which rows some worker
  // touched, and the stop flag), then the touched rows with the other gradients; known from the
  // word ids, the touched rows need no first collective (the stop flag rides with the gradients),
  // and each worker sends only the rows its own share touched.
  // The loss sums wait for the epoch's end.
  CHECK(dense[0].last.allreduce_bytes == Approx(static_cast<double>(numel * 4 + 4)));
  CHECK(sparse[0].last.allreduce_bytes > 0);
  CHECK(sparse[0].last.allreduce_bytes <
        0.25 * dense[0].last.allreduce_bytes);  // 20,000 embedding rows; a batch of 25 rows per worker touches a few hundred
  CHECK(sparse[1].last.allreduce_bytes == sparse[0].last.allreduce_bytes);
  CHECK(by_ids[0].last.allreduce_bytes > 0);
  CHECK(by_ids[0].last.allreduce_bytes < sparse[0].last.allreduce_bytes);  // no byte per table row
  CHECK(by_ids[1].last.allreduce_bytes == by_ids[0].last.allreduce_bytes);
}

TEST_CASE(
    "three workers exchange the word rows by gathering each share's or by summing the batch's, the dense exchange's weights either way",
    "[train][distributed][sparse]") {
  // Each worker receives world - 1 others' buffers in a gather, about twice its own buffer in a ring
  // allreduce. When the shares have few words in common (comments of words drawn evenly from
  // thousands) the gather of each share's rows moves fewer bytes; when they have most in common (the
  // toxic corpus, a larger LSTM), the allreduce of the batch's rows does.
  torch::set_num_threads(1);
  train::TrainOptions o = training(1, 60, 3);
  const std::string word_embedding = models::find_model("bilstm-attention").word_embedding;
  for (const int units : {4, 32}) {
    INFO("lstm_units " << units);
    const auto data = units == 4 ? scattered_words_data(400) : toxic_data(400);
    std::vector<torch::jit::Module> by_ids_models{small_model(units), small_model(units), small_model(units)},
        dense_models{small_model(units), small_model(units), small_model(units)};
    o.sparse_gradients = true;
    const auto by_ids = train_on_workers(by_ids_models, *data, o, word_embedding);
    o.sparse_gradients = false;
    const auto dense = train_on_workers(dense_models, *data, o);
    for (std::size_t i = 0; i < dense[0].parameters.size(); ++i) {
      INFO("parameter " << i);
      // Three addends: a ring allreduce adds them in an order that depends on where an element
      // falls in the buffer, so the last bits differ from the dense exchange's (by 3e-6 here).
      CHECK((by_ids[0].parameters[i] - dense[0].parameters[i]).abs().max().item<double>() <= 1e-5);
      CHECK(by_ids[0].parameters[i].equal(by_ids[1].parameters[i]));
      CHECK(by_ids[0].parameters[i].equal(by_ids[2].parameters[i]));
    }
    CHECK(by_ids[0].last.allreduce_bytes < 0.25 * dense[0].last.allreduce_bytes);
    CHECK(by_ids[2].last.allreduce_bytes == by_ids[0].last.allreduce_bytes);
  }
}

TEST_CASE("two workers stopped mid-epoch resume from rank 0's checkpoint to the uninterrupted run's epoch", "[train][distributed]") {
  // Each worker adds only its own shares' loss during an epoch; a stop mid-epoch sums them into the
  // checkpoint (rank 0 writes it), and the resumed workers must count each share once.
  torch::set_num_threads(1);
  const auto data = toxic_data(400);
  train::TrainOptions o = training(1, 40, 4);
  std::vector<torch::jit::Module> whole_models{small_model(), small_model()};
  const auto whole = train_on_workers(whole_models, *data, o);

  const auto dir = std::filesystem::temp_directory_path() / ("attn_distributed_stop_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string checkpoint = (dir / "checkpoint.pt").string();
  std::vector<bool> finished(2, true);
  // The models are built before the threads start: building seeds the global generator.
  std::vector<torch::jit::Module> stopped_models{small_model(), small_model()}, resumed_models{small_model(), small_model()};
  auto errors = two_workers(std::chrono::seconds(60), [&](int rank, parallel::Workers& workers) {
    train::Trainer t(stopped_models[static_cast<std::size_t>(rank)], *data, nullptr, o, &workers);
    std::atomic<bool> stop{false};
    // Rank 1 alone is asked to stop once 120 of the 320 training rows are done: both stop together.
    const auto progress = [&](const train::Progress& p) {
      if (rank == 1 && p.rows_done >= 120) stop = true;
    };
    finished[static_cast<std::size_t>(rank)] = t.run(stop, progress, nullptr);
    if (rank == 0) t.save_checkpoint(checkpoint);
  });
  INFO(errors[0] + " / " + errors[1]);
  REQUIRE(errors[0].empty());
  REQUIRE(errors[1].empty());
  CHECK(finished == std::vector<bool>{false, false});

  std::vector<WorkerRun> resumed(2);
  errors = two_workers(std::chrono::seconds(60), [&](int rank, parallel::Workers& workers) {
    const auto r = static_cast<std::size_t>(rank);
    train::Trainer t(resumed_models[r], *data, nullptr, o, &workers);
    t.load_checkpoint(checkpoint);
    const std::atomic<bool> no_stop{false};
    REQUIRE(t.run(no_stop, nullptr, [&](const train::EpochRecord& e) { resumed[r].last = e; }));
    resumed[r].parameters = parameters_of(t.model());
  });
  std::filesystem::remove_all(dir);
  INFO(errors[0] + " / " + errors[1]);
  REQUIRE(errors[0].empty());
  REQUIRE(errors[1].empty());
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(resumed[r].last.loss == Approx(whole[0].last.loss).margin(1e-9));
    CHECK(resumed[r].last.accuracy == Approx(whole[0].last.accuracy).margin(1e-9));
    CHECK(resumed[r].last.train_tokens == whole[0].last.train_tokens);
    CHECK(resumed[r].last.train_rows == whole[0].last.train_rows);
  }
  for (std::size_t i = 0; i < whole[0].parameters.size(); ++i)
    CHECK((resumed[0].parameters[i] - whole[0].parameters[i]).abs().max().item<double>() <= 1e-6);
}

TEST_CASE("two workers train seq2seq as one process does: each share weighs its target characters", "[train][distributed]") {
  torch::set_num_threads(1);
  const auto dir = std::filesystem::temp_directory_path() / ("attn_distributed_s2s_" + std::to_string(::getpid()));
  const auto data = number_pairs(dir);
  train::TrainOptions o = training(2, 16, 3);  // bucketed by source length: the shares' target lengths differ
  o.lr = 0.01;
  const WorkerRun single = train_alone(small_seq2seq(*data), *data, o);
  const auto& expected = single.parameters;
  const train::EpochRecord& single_last = single.last;
  std::vector<torch::jit::Module> models{small_seq2seq(*data), small_seq2seq(*data)};
  const auto runs = train_on_workers(models, *data, o);
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK((runs[0].parameters[i] - expected[i]).abs().max().item<double>() <= 1e-5);
  CHECK(runs[0].last.loss == Approx(single_last.loss).margin(1e-6));
  CHECK(runs[0].last.accuracy == Approx(single_last.accuracy).margin(1e-6));
  std::filesystem::remove_all(dir);
}

TEST_CASE("two workers train hierarchical-attention as one process does: documents of sentences shared out", "[train][distributed]") {
  torch::set_num_threads(1);
  const auto dir = std::filesystem::temp_directory_path() / ("attn_distributed_han_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string csv = (dir / "documents.csv").string();
  {
    std::ofstream f(csv, std::ios::binary);
    data::write_document_corpus(f, data::DocumentCorpusOptions{160, 4, 0.35});
  }
  const auto& entry = models::find_model("hierarchical-attention");
  const tasks::Task& task = tasks::task_for(entry.kind);
  const data::Inputs in = tasks_test::train_inputs(task, {{"csv", csv}, {"labels", "toxic,insult"}});
  const auto data = task.open(in, entry, (dir / "run").string(), 1);
  const auto build = [&] {
    torch::manual_seed(5);
    return entry.build(models::fit_config(entry, {{"embed_dim", 8}, {"gru_units", 4}, {"dropout", 0.0}}, data->sizes()),
                       nn::Runtime::kNative);  // no dropout: its masks are drawn per worker
  };
  train::TrainOptions o = training(2, 32, 3);
  const WorkerRun single = train_alone(build(), *data, o);
  const auto& expected = single.parameters;
  const train::EpochRecord& single_last = single.last;
  std::vector<torch::jit::Module> models{build(), build()};
  const auto runs = train_on_workers(models, *data, o);
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK((runs[0].parameters[i] - expected[i]).abs().max().item<double>() <= 1e-5);
  CHECK(runs[0].last.loss == Approx(single_last.loss).margin(1e-6));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a worker whose data differ from rank 0's is refused, naming both", "[train][distributed]") {
  torch::set_num_threads(1);
  const auto data = toxic_data(400), other = toxic_data(300);
  train::TrainOptions o;
  o.epochs = 1;
  o.batch_size = 50;
  std::vector<torch::jit::Module> models{small_model(), small_model()};
  const auto errors = two_workers(std::chrono::seconds(20), [&](int rank, parallel::Workers& workers) {
    train::Trainer t(models[static_cast<std::size_t>(rank)], rank == 0 ? *data : *other, nullptr, o, &workers);
    const std::atomic<bool> no_stop{false};
    t.run(no_stop, nullptr, nullptr);
  });
  CHECK_THAT(errors[1], Catch::Contains("worker 1") && Catch::Contains("300 rows") && Catch::Contains("rank 0's (400 rows"));
  CHECK_THAT(errors[0], Catch::Contains("worker 0 of 2"));  // its peer left: an error, not a hang
}
