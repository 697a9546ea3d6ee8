// Prometheus metrics (attn/server/metrics.h): the text exposition a scraper reads, each series with
// its counts, cumulative histogram buckets, escaped label values and one series per label set.
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/server/metrics.h"

using attn::server::Metrics;

namespace {

/// One sample line of the exposition: its metric name, its labels decoded, its value as written.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string value;
};

/// Reads `text` as Prometheus' text format 0.0.4 does: every line a "# HELP", a "# TYPE" or a sample
/// of a family whose TYPE came before; label values quoted, with only \\, \" and \n escaped. A
/// malformed line fails the test (naming it).
std::vector<Sample> scrape(const std::string& text) {
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    INFO("line: " << line);
    REQUIRE_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      CHECK(types.count(name) == 0);  // one TYPE per family
      types[name] = type;
      continue;
    }
    Sample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') s.name += line[i++];
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (line.at(i) != '}') {
        std::string key, value;
        while (line.at(i) != '=') key += line[i++];
        REQUIRE(line.at(++i) == '"');
        for (++i; line.at(i) != '"'; ++i) {
          if (line[i] != '\\') {
            value += line[i];
            continue;
          }
          const char escaped = line.at(++i);
          REQUIRE((escaped == '\\' || escaped == '"' || escaped == 'n'));
          value += escaped == 'n' ? '\n' : escaped;
        }
        ++i;
        if (line.at(i) == ',') ++i;
        CHECK(s.labels.count(key) == 0);
        s.labels[key] = value;
      }
      ++i;
    }
    REQUIRE(line.at(i) == ' ');
    s.value = line.substr(i + 1);
    REQUIRE_FALSE(s.value.empty());
    std::string family = s.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string tail = suffix;
      if (family.size() > tail.size() && family.compare(family.size() - tail.size(), tail.size(), tail) == 0 &&
          types.count(family.substr(0, family.size() - tail.size())))
        family = family.substr(0, family.size() - tail.size());
    }
    CHECK(types.count(family) == 1);  // its TYPE came first
    samples.push_back(s);
  }
  return samples;
}

/// The samples named `name` whose labels include `labels`.
std::vector<Sample> series(const std::vector<Sample>& samples, const std::string& name,
                           const std::map<std::string, std::string>& labels = {}) {
  std::vector<Sample> out;
  for (const Sample& s : samples) {
    bool match = s.name == name;
    for (const auto& [k, v] : labels) match = match && s.labels.count(k) && s.labels.at(k) == v;
    if (match) out.push_back(s);
  }
  return out;
}

/// The value of the one sample named `name` with `labels` ("" when none or several match).
std::string value_of(const std::vector<Sample>& samples, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  const auto found = series(samples, name, labels);
  return found.size() == 1 ? found[0].value : "";
}

}  // namespace

TEST_CASE("requests are counted by route and status, their durations in cumulative buckets", "[server][metrics]") {
  Metrics m;
  m.request("/v1/predict", 200, 0.003);
  m.request("/v1/predict", 200, 0.005);  // on a bucket's bound: counted in it (le)
  m.request("/v1/predict", 400, 0.2);
  m.request("other", 404, 20);
  const auto samples = scrape(m.render(0, 1, 0));
  CHECK(value_of(samples, "attn_requests_total", {{"route", "/v1/predict"}, {"status", "200"}}) == "2");
  CHECK(value_of(samples, "attn_requests_total", {{"route", "/v1/predict"}, {"status", "400"}}) == "1");
  CHECK(value_of(samples, "attn_requests_total", {{"route", "other"}, {"status", "404"}}) == "1");
  CHECK(series(samples, "attn_requests_total").size() == 3);
  const std::string latency = "attn_request_duration_seconds_bucket";
  const std::map<std::string, std::string> predict = {{"route", "/v1/predict"}};
  CHECK(value_of(samples, latency, {{"route", "/v1/predict"}, {"le", "0.0025"}}) == "0");
  CHECK(value_of(samples, latency, {{"route", "/v1/predict"}, {"le", "0.005"}}) == "2");
  CHECK(value_of(samples, latency, {{"route", "/v1/predict"}, {"le", "0.1"}}) == "2");
  CHECK(value_of(samples, latency, {{"route", "/v1/predict"}, {"le", "0.25"}}) == "3");
  CHECK(value_of(samples, latency, {{"route", "/v1/predict"}, {"le", "+Inf"}}) == "3");
  CHECK(value_of(samples, "attn_request_duration_seconds_count", predict) == "3");
  CHECK(std::stod(value_of(samples, "attn_request_duration_seconds_sum", predict)) == Approx(0.208));
  CHECK(value_of(samples, latency, {{"route", "other"}, {"le", "10"}}) == "0");  // past the last bound: +Inf only
  CHECK(value_of(samples, latency, {{"route", "other"}, {"le", "+Inf"}}) == "1");
  // Buckets never decrease, and each route has the same bounds.
  const auto buckets = series(samples, latency, predict);
  CHECK(buckets.size() == series(samples, latency, {{"route", "other"}}).size());
  for (std::size_t i = 1; i < buckets.size(); ++i) CHECK(std::stoull(buckets[i - 1].value) <= std::stoull(buckets[i].value));
}

TEST_CASE("batch sizes, refusals, reloads and the gauges", "[server][metrics]") {
  Metrics m;
  for (std::size_t inputs : {1, 3, 64, 300}) m.batch(inputs);
  m.refused("read_timeout", 408);
  m.refused("read_timeout", 408);
  m.refused("saturated", 503);
  m.reload("toxic", true);
  m.reload("toxic", false);
  m.reload("toxic", true);
  const auto samples = scrape(m.render(5, 2, 7));
  CHECK(value_of(samples, "attn_batch_size_bucket", {{"le", "1"}}) == "1");
  CHECK(value_of(samples, "attn_batch_size_bucket", {{"le", "4"}}) == "2");
  CHECK(value_of(samples, "attn_batch_size_bucket", {{"le", "64"}}) == "3");
  CHECK(value_of(samples, "attn_batch_size_bucket", {{"le", "256"}}) == "3");
  CHECK(value_of(samples, "attn_batch_size_bucket", {{"le", "+Inf"}}) == "4");
  CHECK(value_of(samples, "attn_batch_size_sum") == "368");
  CHECK(value_of(samples, "attn_batch_size_count") == "4");
  CHECK(value_of(samples, "attn_connections_refused_total", {{"reason", "read_timeout"}, {"status", "408"}}) == "2");
  CHECK(value_of(samples, "attn_connections_refused_total", {{"reason", "saturated"}, {"status", "503"}}) == "1");
  CHECK(value_of(samples, "attn_model_reloads_total", {{"model", "toxic"}, {"result", "ok"}}) == "2");
  CHECK(value_of(samples, "attn_model_reloads_total", {{"model", "toxic"}, {"result", "failed"}}) == "1");
  CHECK(value_of(samples, "attn_queue_depth") == "5");
  CHECK(value_of(samples, "attn_models_loaded") == "2");
  CHECK(value_of(samples, "attn_open_connections") == "7");
}

TEST_CASE("an idle server's exposition declares every family; per-key counts only with keys", "[server][metrics]") {
  Metrics m;
  const std::string idle = m.render(0, 0, 0);
  scrape(idle);
  for (const char* family : {"attn_requests_total counter", "attn_request_duration_seconds histogram",
                             "attn_connections_refused_total counter", "attn_model_reloads_total counter", "attn_batch_size histogram",
                             "attn_queue_depth gauge", "attn_open_connections gauge", "attn_models_loaded gauge"})
    CHECK_THAT(idle, Catch::Contains(std::string("# TYPE ") + family + "\n"));
  CHECK(value_of(scrape(idle), "attn_batch_size_count") == "0");
  m.request("/metrics", 200, 0.001);
  CHECK_THAT(m.render(0, 0, 0), !Catch::Contains("attn_requests_by_key_total"));  // a server without keys names none
  m.request("/v1/explain", 200, 0.001, "alice");
  m.request("/v1/predict", 200, 0.001, "alice");
  m.request("/v1/predict", 401, 0.001);
  const auto samples = scrape(m.render(0, 0, 0));
  CHECK(value_of(samples, "attn_requests_by_key_total", {{"key", "alice"}}) == "2");
  CHECK(series(samples, "attn_requests_by_key_total").size() == 1);
}

TEST_CASE("label values are escaped, and repeated label sets stay one series", "[server][metrics]") {
  Metrics m;
  const std::string name = "to\"xic\\2\nnew";  // an operator may name a model anything (--model NAME=PATH)
  m.reload(name, true);
  m.reload(name, true);
  m.refused("read_timeout", 408);
  for (int i = 0; i < 1000; ++i) m.request("other", 404, 0.001);  // unknown paths: the caller's one label
  const std::string text = m.render(0, 0, 0);
  const auto samples = scrape(text);
  CHECK(value_of(samples, "attn_model_reloads_total", {{"model", name}, {"result", "ok"}}) == "2");
  CHECK(series(samples, "attn_model_reloads_total").size() == 1);
  CHECK(series(samples, "attn_requests_total").size() == 1);
  CHECK(value_of(samples, "attn_requests_total", {{"route", "other"}, {"status", "404"}}) == "1000");
  CHECK(series(samples, "attn_request_duration_seconds_count").size() == 1);
}

TEST_CASE("counts from many threads at once are all kept", "[server][metrics]") {
  Metrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&m, t] {
      for (int i = 0; i < 500; ++i) {
        m.request(t % 2 ? "/v1/predict" : "/v1/explain", 200, 0.01);
        m.batch(2);
        m.refused("per_client", 429);
      }
    });
  for (auto& t : threads) t.join();
  const auto samples = scrape(m.render(0, 0, 0));
  CHECK(value_of(samples, "attn_requests_total", {{"route", "/v1/predict"}, {"status", "200"}}) == "1000");
  CHECK(value_of(samples, "attn_requests_total", {{"route", "/v1/explain"}, {"status", "200"}}) == "1000");
  CHECK(value_of(samples, "attn_batch_size_count") == "2000");
  CHECK(value_of(samples, "attn_connections_refused_total", {{"reason", "per_client"}, {"status", "429"}}) == "2000");
}
