// Dynamic batching: requests from many threads run together, results go back to their own request,
// a bad request fails alone, the queue is bounded, stop() drains. A stand-in model records batches.
#include <atomic>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "attn/server/batcher.h"

using namespace attn;
using server::Mode;

namespace {

/// Echoes each input's text with the size of the batch it ran in; a text "bad" makes it throw.
class EchoModel : public tasks::TrainedModel {
 public:
  EchoModel() : TrainedModel(models::SavedModel{}) {}
  std::vector<std::size_t> batches;  // (written by the inference threads; read after they are done)
  std::vector<nlohmann::ordered_json> predict(const std::vector<tasks::Input>& inputs, std::int64_t batch_size) override {
    return run(inputs, batch_size, "predict");
  }
  std::unique_ptr<tasks::Explanations> explain(const std::vector<tasks::Input>& inputs, std::int64_t batch_size) override {
    std::vector<report::FeatureExplanation> out;
    for (const auto& j : run(inputs, batch_size, "explain"))
      out.push_back({{j.at("text").get<std::string>()}, "explain", {0}, static_cast<float>(j.at("batch").get<int>()), {1}});
    return std::make_unique<tasks::ExplanationList<report::FeatureExplanation>>(out);
  }
  std::vector<tasks::Input> read_inputs(const std::vector<std::string>&, const data::Inputs&,
                                        const std::function<std::vector<std::string>()>&) const override { return {}; }
  nlohmann::ordered_json describe() const override { return {}; }
  std::vector<std::string> examples() const override { return {}; }
  void check(const std::vector<tasks::Input>&) const override {}
  std::unique_ptr<tasks::Dataset> open_csv(const std::string&, const data::Inputs&, int) const override { return nullptr; }

 private:
  std::mutex mutex_;
  std::vector<nlohmann::ordered_json> run(const std::vector<tasks::Input>& inputs, std::int64_t, const char* mode) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batches.push_back(inputs.size());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a model takes a while
    std::vector<nlohmann::ordered_json> out;
    for (const auto& in : inputs) {
      if (in.text == "bad") throw std::invalid_argument("a bad input");
      out.push_back({{"text", in.text}, {"batch", inputs.size()}, {"mode", mode}});
    }
    return out;
  }
};

/// Result i of a request, parsed (the batcher hands results over as JSON text).
nlohmann::ordered_json result(const server::Results& r, std::size_t i) { return nlohmann::ordered_json::parse(r.at(i)); }

std::vector<tasks::Input> texts(std::initializer_list<std::string> t) {
  std::vector<tasks::Input> out;
  for (const auto& s : t) out.push_back({s, {}});
  return out;
}

}  // namespace

TEST_CASE("requests from many threads run together, each gets its own results", "[server][batcher]") {
  EchoModel model;
  std::atomic<std::size_t> observed{0};
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(200), 1024}, [&](std::size_t n) { observed += n; });
  std::vector<std::thread> clients;
  std::vector<server::Results> results(16);
  for (int i = 0; i < 16; ++i)
    clients.emplace_back([&, i] { results[static_cast<std::size_t>(i)] = batcher.submit(0, Mode::kPredict, texts({"t" + std::to_string(i)})).get(); });
  for (auto& c : clients) c.join();
  for (int i = 0; i < 16; ++i) {
    REQUIRE(results[static_cast<std::size_t>(i)].size() == 1);
    CHECK(result(results[static_cast<std::size_t>(i)], 0).at("text") == "t" + std::to_string(i));
  }
  CHECK(observed == 16);
  CHECK(model.batches.size() < 16);  // they waited for company
  CHECK(*std::max_element(model.batches.begin(), model.batches.end()) > 1);
}

TEST_CASE("by default nothing waits: a batch is what queued while the inference thread was busy", "[server][batcher]") {
  EchoModel model;
  server::BatcherOptions options;
  options.max_batch = 64;
  REQUIRE(options.max_delay == std::chrono::milliseconds(0));
  std::atomic<int> batches_started{0};
  server::Batcher batcher({{&model}}, options, [&](std::size_t) { ++batches_started; });
  auto first = batcher.submit(0, Mode::kPredict, texts({"first"}));
  while (batches_started == 0) std::this_thread::yield();  // the first runs (20 ms) while three more arrive
  auto a = batcher.submit(0, Mode::kPredict, texts({"a"}));
  auto b = batcher.submit(0, Mode::kPredict, texts({"b", "c"}));
  CHECK(result(first.get(), 0).at("batch") == 1);  // it did not wait for the others
  CHECK(result(a.get(), 0).at("batch") == 3);      // they ran together as soon as the thread was free
  CHECK(result(b.get(), 1).at("text") == "c");
  CHECK(model.batches == std::vector<std::size_t>{1, 3});
}

TEST_CASE("a batch holds at most max_batch inputs, predict and explain never mix", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {3, std::chrono::milliseconds(300), 1024});
  auto a = batcher.submit(0, Mode::kPredict, texts({"a1", "a2"}));
  auto b = batcher.submit(0, Mode::kExplain, texts({"b1"}));
  auto c = batcher.submit(0, Mode::kPredict, texts({"c1", "c2"}));
  auto d = batcher.submit(0, Mode::kPredict, texts({"d1"}));
  CHECK(result(a.get(), 1).at("text") == "a2");
  const auto explained = b.get();
  CHECK(result(explained, 0).at("features")[0].at("feature") == "b1");
  CHECK(result(c.get(), 0).at("text") == "c1");
  CHECK(result(d.get(), 0).at("batch") <= 3);
  for (std::size_t n : model.batches) CHECK(n <= 3);
}

TEST_CASE("a bad request fails alone; the others in its batch get their results", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(200), 1024});
  auto good = batcher.submit(0, Mode::kPredict, texts({"fine"}));
  auto bad = batcher.submit(0, Mode::kPredict, texts({"bad"}));
  auto other = batcher.submit(0, Mode::kPredict, texts({"also fine", "and this"}));
  CHECK(result(good.get(), 0).at("text") == "fine");
  CHECK_THROWS_AS(bad.get(), std::invalid_argument);
  CHECK(result(other.get(), 1).at("text") == "and this");
}

TEST_CASE("the queue is bounded, and stop() runs what is queued", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(2000), 3});
  auto first = batcher.submit(0, Mode::kPredict, texts({"a", "b"}));
  CHECK(batcher.queued() == 2);
  CHECK_THROWS_AS(batcher.submit(0, Mode::kPredict, texts({"c", "d"})), server::QueueFull);
  batcher.stop();  // does not wait out the delay, and runs the queued request
  CHECK(first.get().size() == 2);
  CHECK_THROWS_WITH(batcher.submit(0, Mode::kPredict, texts({"late"})), Catch::Contains("shutting down"));
}

TEST_CASE("several inference threads share the queue; every request is answered once", "[server][batcher]") {
  EchoModel model;
  std::mutex seen;
  std::atomic<std::size_t> inputs{0};
  // (one stand-in for the three threads: it locks; a real model gets a copy per thread)
  server::Batcher batcher({{&model, &model, &model}}, {4, std::chrono::milliseconds(10), 1024, 3}, [&](std::size_t n) { inputs += n; });
  std::vector<std::thread> clients;
  std::atomic<int> right{0};
  for (int i = 0; i < 40; ++i)
    clients.emplace_back([&, i] {
      const std::string t = "t" + std::to_string(i);
      const auto r = batcher.submit(0, i % 2 ? Mode::kPredict : Mode::kExplain, texts({t})).get();
      const auto j = result(r, 0);
      if ((j.contains("text") && j.at("text") == t) || (j.contains("features") && j.at("features")[0].at("feature") == t)) ++right;
    });
  for (auto& c : clients) c.join();
  CHECK(right == 40);
  CHECK(inputs == 40);
}
