// Dynamic batching: requests from many threads run together, results go back to their own request,
// a bad request fails alone, the queue is bounded, stop() drains, a costly request runs in slices
// that let light ones through. A stand-in model records batches; a gate holds it inside a batch, so
// every test decides what has queued by the time the next batch forms (no sleeps, no timing).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "attn/server/batcher.h"

using namespace attn;
using server::Mode;

namespace {

/// Echoes each input's text with the size of the batch it ran in; a text "bad" makes it throw.
/// While `held`, a batch waits inside the model until release().
class EchoModel : public tasks::TrainedModel {
 public:
  EchoModel() : TrainedModel(models::SavedModel{}) {}

  std::vector<nlohmann::ordered_json> predict(const std::vector<tasks::Input>& inputs, std::int64_t) override {
    return run(inputs, "predict");
  }
  std::unique_ptr<tasks::Explanations> explain(const std::vector<tasks::Input>& inputs, std::int64_t,
                                               const tasks::ExplainOptions&) override {
    std::vector<report::FeatureExplanation> out;
    for (const auto& j : run(inputs, "explain")) {
      report::FeatureExplanation e;  // the text as the feature's name, the batch size as the probability
      e.feature_names = {j.at("text").get<std::string>()};
      e.label_name = "explain";
      e.values = {0};
      e.probability = static_cast<float>(j.at("batch").get<int>());
      e.attention = {1};
      out.push_back(std::move(e));
    }
    return std::make_unique<tasks::ExplanationList<report::FeatureExplanation>>(out);
  }
  std::vector<models::Method> methods() const override { return {models::Method::kAttention, models::Method::kIntegratedGradients}; }
  std::vector<std::int64_t> units(const std::vector<tasks::Input>& inputs) const override {
    std::vector<std::int64_t> out;
    for (const auto& in : inputs) out.push_back(static_cast<std::int64_t>(in.text.size()));
    return out;
  }
  std::vector<tasks::Input> read_inputs(const std::vector<std::string>&, const data::Inputs&,
                                        const std::function<std::vector<std::string>()>&) const override {
    return {};
  }
  nlohmann::ordered_json describe() const override { return {}; }
  tasks::ModelFacts facts() const override { return {}; }
  std::vector<std::string> examples() const override { return {}; }
  void check(const std::vector<tasks::Input>&) const override {}
  std::unique_ptr<tasks::Dataset> open_csv(const std::string&, const data::Inputs&, int) const override { return nullptr; }

  void hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = true;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      held_ = false;
    }
    changed_.notify_all();
  }
  /// Waits until `n` batches have entered the model.
  void wait_for_batches(std::size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return batches_.size() >= n; });
  }
  /// (size, mode) of every batch, in the order they entered the model.
  std::vector<std::pair<std::size_t, std::string>> batches() {
    std::lock_guard<std::mutex> lock(mutex_);
    return batches_;
  }
  std::vector<std::size_t> sizes() {
    std::vector<std::size_t> out;
    for (const auto& b : batches()) out.push_back(b.first);
    return out;
  }

 private:
  std::vector<nlohmann::ordered_json> run(const std::vector<tasks::Input>& inputs, const char* mode) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      batches_.emplace_back(inputs.size(), mode);
      changed_.notify_all();
      changed_.wait(lock, [&] { return !held_; });
    }
    std::vector<nlohmann::ordered_json> out;
    for (const auto& in : inputs) {
      if (in.text == "bad") throw std::invalid_argument("a bad input");
      out.push_back({{"text", in.text}, {"batch", inputs.size()}, {"mode", mode}});
    }
    return out;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool held_ = false;
  std::vector<std::pair<std::size_t, std::string>> batches_;
};

/// Result i of a request, parsed (the batcher hands results over as JSON text).
nlohmann::ordered_json result(const server::Results& r, std::size_t i) { return nlohmann::ordered_json::parse(r.at(i)); }

/// The batcher's callback as a future, for the tests to wait on.
std::future<server::Results> submit(server::Batcher& batcher, std::size_t model, Mode mode, std::vector<tasks::Input> inputs,
                                    tasks::ExplainOptions options = {}) {
  auto promise = std::make_shared<std::promise<server::Results>>();
  std::future<server::Results> future = promise->get_future();
  batcher.submit(model, mode, std::move(inputs), std::move(options), [promise](server::Results results, std::exception_ptr error) {
    if (error)
      promise->set_exception(error);
    else
      promise->set_value(std::move(results));
  });
  return future;
}

std::vector<tasks::Input> texts(std::initializer_list<std::string> t) {
  std::vector<tasks::Input> out;
  for (const auto& s : t) out.push_back({s, {}});
  return out;
}

}  // namespace

TEST_CASE("requests from many threads run together, each gets its own results", "[server][batcher]") {
  EchoModel model;
  std::atomic<std::size_t> observed{0};
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(0), 1024}, [&](std::size_t n) { observed += n; });
  model.hold();
  auto first = submit(batcher, 0, Mode::kPredict, texts({"first"}));
  model.wait_for_batches(1);  // the inference thread is busy with it while 16 clients send theirs
  std::vector<std::thread> clients;
  std::vector<std::future<server::Results>> futures(16);
  for (int i = 0; i < 16; ++i)
    clients.emplace_back(
        [&, i] { futures[static_cast<std::size_t>(i)] = submit(batcher, 0, Mode::kPredict, texts({"t" + std::to_string(i)})); });
  for (auto& c : clients) c.join();
  CHECK(batcher.queued() == 16);
  model.release();
  CHECK(result(first.get(), 0).at("text") == "first");
  for (int i = 0; i < 16; ++i) {
    const server::Results r = futures[static_cast<std::size_t>(i)].get();
    REQUIRE(r.size() == 1);
    CHECK(result(r, 0).at("text") == "t" + std::to_string(i));
    CHECK(result(r, 0).at("batch") == 16);
  }
  CHECK(observed == 17);
  CHECK(model.sizes() == std::vector<std::size_t>{1, 16});  // the 16 ran as one batch
}

TEST_CASE("by default nothing waits: a batch is what queued while the inference thread was busy", "[server][batcher]") {
  EchoModel model;
  server::BatcherOptions options;
  options.max_batch = 64;
  REQUIRE(options.max_delay == std::chrono::milliseconds(0));
  server::Batcher batcher({{&model}}, options);
  model.hold();
  auto first = submit(batcher, 0, Mode::kPredict, texts({"first"}));
  model.wait_for_batches(1);  // the first runs alone, while three more inputs arrive
  auto a = submit(batcher, 0, Mode::kPredict, texts({"a"}));
  auto b = submit(batcher, 0, Mode::kPredict, texts({"b", "c"}));
  model.release();
  CHECK(result(first.get(), 0).at("batch") == 1);  // it did not wait for the others
  CHECK(result(a.get(), 0).at("batch") == 3);      // they ran together as soon as the thread was free
  CHECK(result(b.get(), 1).at("text") == "c");
  CHECK(model.sizes() == std::vector<std::size_t>{1, 3});
}

TEST_CASE("a batch holds at most max_batch inputs, predict and explain never mix", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {3, std::chrono::milliseconds(0), 1024});
  model.hold();
  auto first = submit(batcher, 0, Mode::kPredict, texts({"first"}));
  model.wait_for_batches(1);
  auto a = submit(batcher, 0, Mode::kPredict, texts({"a1", "a2"}));
  auto b = submit(batcher, 0, Mode::kExplain, texts({"b1"}));
  auto c = submit(batcher, 0, Mode::kPredict, texts({"c1", "c2"}));
  auto d = submit(batcher, 0, Mode::kPredict, texts({"d1", "d2", "d3", "d4"}));  // more than a batch: runs in slices
  model.release();
  CHECK(result(a.get(), 1).at("text") == "a2");
  CHECK(result(b.get(), 0).at("features")[0].at("feature") == "b1");
  CHECK(result(c.get(), 0).at("text") == "c1");
  const server::Results dr = d.get();
  REQUIRE(dr.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(result(dr, i).at("text") == "d" + std::to_string(i + 1));
  for (const auto& [size, mode] : model.batches()) CHECK(size <= 3);
  std::size_t explained = 0;
  for (const auto& [size, mode] : model.batches()) explained += mode == "explain" ? size : 0;
  CHECK(explained == 1);  // the explain request ran in a batch of its own kind
}

TEST_CASE("a bad request fails alone, the others in its batch get their results", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(0), 1024});
  model.hold();
  auto first = submit(batcher, 0, Mode::kPredict, texts({"first"}));
  model.wait_for_batches(1);
  auto good = submit(batcher, 0, Mode::kPredict, texts({"fine"}));
  auto bad = submit(batcher, 0, Mode::kPredict, texts({"bad"}));
  auto other = submit(batcher, 0, Mode::kPredict, texts({"also fine", "and this"}));
  model.release();
  CHECK(result(good.get(), 0).at("text") == "fine");
  CHECK_THROWS_AS(bad.get(), std::invalid_argument);
  CHECK(result(other.get(), 1).at("text") == "and this");
  CHECK(model.sizes().at(1) == 4);  // they were one batch, which failed; then each ran alone
}

TEST_CASE("the queue is bounded, and stop() runs what is queued", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(0), 3});
  model.hold();
  auto first = submit(batcher, 0, Mode::kPredict, texts({"x"}));
  model.wait_for_batches(1);
  auto queued = submit(batcher, 0, Mode::kPredict, texts({"a", "b"}));
  CHECK(batcher.queued() == 2);
  CHECK_THROWS_AS(submit(batcher, 0, Mode::kPredict, texts({"c", "d"})), server::QueueFull);
  std::thread stopper([&] { batcher.stop(); });  // waits for the batch in the model, then runs the queued request
  model.release();
  stopper.join();
  CHECK(queued.get().size() == 2);
  CHECK_THROWS_WITH(submit(batcher, 0, Mode::kPredict, texts({"late"})), Catch::Contains("shutting down"));
}

TEST_CASE("a request still queued at its deadline is dropped, not run, one being run finishes", "[server][batcher]") {
  EchoModel model;
  std::atomic<std::int64_t> now_ms{0};  // a fake clock: the test decides when the deadline has passed
  server::BatcherOptions options;
  options.request_timeout = std::chrono::milliseconds(100);
  options.clock = [&] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(now_ms.load())); };
  server::Batcher batcher({{&model}}, options);
  model.hold();
  auto running = submit(batcher, 0, Mode::kPredict, texts({"running"}));
  model.wait_for_batches(1);
  auto stale = submit(batcher, 0, Mode::kPredict, texts({"stale", "stale"}));
  now_ms = 150;  // past the first two requests' deadline
  auto fresh = submit(batcher, 0, Mode::kPredict, texts({"fresh"}));
  CHECK(batcher.queued() == 3);
  model.release();
  CHECK(running.get().size() == 1);  // it was in the model when its deadline passed
  CHECK_THROWS_AS(stale.get(), server::TimedOut);
  CHECK(result(fresh.get(), 0).at("text") == "fresh");
  model.wait_for_batches(2);
  CHECK(model.sizes() == std::vector<std::size_t>{1, 1});  // the stale inputs never reached the model
  CHECK(batcher.queued() == 0);
}

TEST_CASE("a light request queued behind a costly one runs first, the costly one runs a slice at a time", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(0), 1024});
  tasks::ExplainOptions integrated;
  integrated.methods = {models::Method::kIntegratedGradients};
  integrated.steps = 20;  // ~3 x 20 passes an input: one input a batch of 64
  REQUIRE(model.explain_cost(integrated) > 32);
  model.hold();
  auto first = submit(batcher, 0, Mode::kPredict, texts({"first"}));
  model.wait_for_batches(1);
  auto heavy = submit(batcher, 0, Mode::kExplain, texts({"h1", "h2", "h3", "h4"}), integrated);
  auto light = submit(batcher, 0, Mode::kPredict, texts({"light"}));
  model.release();
  const server::Results h = heavy.get();
  REQUIRE(h.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(result(h, i).at("features")[0].at("feature") == "h" + std::to_string(i + 1));
  CHECK(result(light.get(), 0).at("text") == "light");
  const auto batches = model.batches();
  REQUIRE(batches.size() == 6);  // first, light, h1, h2, h3, h4
  CHECK(batches[1] == std::make_pair(std::size_t{1}, std::string("predict")));
  for (std::size_t i = 2; i < 6; ++i) CHECK(batches[i] == std::make_pair(std::size_t{1}, std::string("explain")));
}

TEST_CASE("a light request waits only for the batch running, however many costly ones are queued", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::milliseconds(0), 1024});
  tasks::ExplainOptions integrated;
  integrated.methods = {models::Method::kIntegratedGradients};
  integrated.steps = 20;
  model.hold();
  std::vector<std::future<server::Results>> heavy;
  heavy.push_back(submit(batcher, 0, Mode::kExplain, texts({"h0"}), integrated));
  model.wait_for_batches(1);  // h0 runs; 31 more costly requests queue behind it
  for (int i = 1; i < 32; ++i) heavy.push_back(submit(batcher, 0, Mode::kExplain, texts({"h" + std::to_string(i)}), integrated));
  auto light = submit(batcher, 0, Mode::kPredict, texts({"light"}));
  model.release();
  CHECK(result(light.get(), 0).at("text") == "light");
  for (auto& h : heavy) CHECK(h.get().size() == 1);
  const auto batches = model.batches();
  REQUIRE(batches.size() == 33);
  CHECK(batches[1].second == "predict");  // next after the batch that was running
}

TEST_CASE("several inference threads share the queue, every request is answered once", "[server][batcher]") {
  EchoModel model;
  std::atomic<std::size_t> inputs{0};
  // (one stand-in for the three threads: it locks; a real model gets a copy per thread)
  server::Batcher batcher({{&model, &model, &model}}, {4, std::chrono::milliseconds(0), 1024, 3}, [&](std::size_t n) { inputs += n; });
  std::vector<std::thread> clients;
  std::atomic<int> right{0};
  for (int i = 0; i < 40; ++i)
    clients.emplace_back([&, i] {
      const std::string t = "t" + std::to_string(i);
      const auto r = submit(batcher, 0, i % 2 ? Mode::kPredict : Mode::kExplain, texts({t})).get();
      const auto j = result(r, 0);
      if ((j.contains("text") && j.at("text") == t) || (j.contains("features") && j.at("features")[0].at("feature") == t)) ++right;
    });
  for (auto& c : clients) c.join();
  CHECK(right == 40);
  CHECK(inputs == 40);
}

TEST_CASE("drain(): requests waiting for company run at once, and requests are still taken", "[server][batcher]") {
  EchoModel model;
  server::Batcher batcher({{&model}}, {64, std::chrono::hours(1), 1024});  // the oldest would wait an hour for company
  auto first = submit(batcher, 0, Mode::kPredict, texts({"a", "b"}));
  batcher.drain();
  CHECK(result(first.get(), 1).at("text") == "b");
  CHECK(result(submit(batcher, 0, Mode::kPredict, texts({"c"})).get(), 0).at("text") == "c");
}
