#pragma once
/// The server's metrics in Prometheus' text exposition format (version 0.0.4): requests by route
/// and status, a latency histogram by route, a batch-size histogram, connections refused by the
/// front end, the queue depth, the open connections and the models loaded. Thread-safe.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace attn::server {

class Metrics {
 public:
  /// `route` is a known route or "other" (so unknown paths cannot grow the label set); `key` the
  /// API key's name ("" without keys).
  void request(const std::string& route, int status, double seconds, const std::string& key = "");
  void batch(std::size_t inputs);
  /// A connection the front end answered and closed itself (front.h: "read_timeout", "saturated", ...).
  void refused(const std::string& reason, int status);
  /// A model file re-read (POST /v1/models/NAME/reload, SIGHUP): swapped in, or failed.
  void reload(const std::string& model, bool ok);
  /// The exposition, with the gauges' current values.
  std::string render(std::size_t queue_depth, std::size_t models_loaded, std::size_t open_connections) const;

 private:
  struct Histogram {
    std::vector<double> bounds;
    std::vector<std::uint64_t> counts;  ///< per bound, not cumulative; one more for +Inf
    double sum = 0;
    std::uint64_t count = 0;
    void observe(double v);
  };
  static Histogram latency_histogram();
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::pair<std::string, int>, std::uint64_t> refused_;
  std::map<std::string, std::uint64_t> by_key_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> reloads_;
  Histogram batch_sizes_{{1, 2, 4, 8, 16, 32, 64, 128, 256}, std::vector<std::uint64_t>(10, 0)};
};

}  // namespace attn::server
