#include "attn/server/metrics.h"

#include <cstdio>

namespace attn::server {
namespace {

std::string number(double v, const char* format = "%.17g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// A label value as the exposition quotes it: backslash, double quote and line feed escaped (a model
/// may be named anything on the command line).
std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) out += c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

}  // namespace

void Metrics::Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++counts[i];
  sum += v;
  ++count;
}

Metrics::Histogram Metrics::latency_histogram() {
  const std::vector<double> bounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return Histogram{bounds, std::vector<std::uint64_t>(bounds.size() + 1, 0)};
}

void Metrics::request(const std::string& route, int status, double seconds, const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, status}];
  if (!key.empty()) ++by_key_[key];
  auto it = latency_.find(route);
  if (it == latency_.end()) it = latency_.emplace(route, latency_histogram()).first;
  it->second.observe(seconds);
}

void Metrics::batch(std::size_t inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  batch_sizes_.observe(static_cast<double>(inputs));
}

void Metrics::refused(const std::string& reason, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++refused_[{reason, status}];
}

void Metrics::reload(const std::string& model, bool ok) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++reloads_[{model, ok ? "ok" : "failed"}];
}

std::string Metrics::render(std::size_t queue_depth, std::size_t models_loaded, std::size_t open_connections) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  const auto histogram = [&out](const std::string& name, const std::string& labels, const Histogram& h) {
    const std::string sep = labels.empty() ? "" : ",";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < h.bounds.size(); ++i) {
      cumulative += h.counts[i];
      out += name + "_bucket{" + labels + sep + "le=\"" + number(h.bounds[i], "%g") + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    const std::string braces = labels.empty() ? "" : "{" + labels + "}";
    out += name + "_sum" + braces + " " + number(h.sum) + "\n" + name + "_count" + braces + " " + std::to_string(h.count) + "\n";
  };
  out += "# HELP attn_requests_total HTTP requests by route and status.\n# TYPE attn_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += "attn_requests_total{route=\"" + escaped(key.first) + "\",status=\"" + std::to_string(key.second) + "\"} " + std::to_string(n) +
           "\n";
  if (!by_key_.empty()) {
    out += "# HELP attn_requests_by_key_total Authenticated requests by API key name.\n# TYPE attn_requests_by_key_total counter\n";
    for (const auto& [key, n] : by_key_) out += "attn_requests_by_key_total{key=\"" + escaped(key) + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP attn_request_duration_seconds Time from a request's arrival to its response, by route.\n"
      "# TYPE attn_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) histogram("attn_request_duration_seconds", "route=\"" + escaped(route) + "\"", h);
  out +=
      "# HELP attn_connections_refused_total Connections answered and closed before routing (slow, too many, busy).\n"
      "# TYPE attn_connections_refused_total counter\n";
  for (const auto& [key, n] : refused_)
    out += "attn_connections_refused_total{reason=\"" + escaped(key.first) + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  out += "# HELP attn_model_reloads_total Model files re-read, by model and result.\n# TYPE attn_model_reloads_total counter\n";
  for (const auto& [key, n] : reloads_)
    out += "attn_model_reloads_total{model=\"" + escaped(key.first) + "\",result=\"" + key.second + "\"} " + std::to_string(n) + "\n";
  out += "# HELP attn_batch_size Inputs per batch run by the model.\n# TYPE attn_batch_size histogram\n";
  histogram("attn_batch_size", "", batch_sizes_);
  out += "# HELP attn_queue_depth Inputs waiting for a batch.\n# TYPE attn_queue_depth gauge\nattn_queue_depth " +
         std::to_string(queue_depth) + "\n";
  out += "# HELP attn_open_connections Client connections open.\n# TYPE attn_open_connections gauge\nattn_open_connections " +
         std::to_string(open_connections) + "\n";
  out += "# HELP attn_models_loaded Models loaded and warmed up.\n# TYPE attn_models_loaded gauge\nattn_models_loaded " +
         std::to_string(models_loaded) + "\n";
  return out;
}

}  // namespace attn::server
