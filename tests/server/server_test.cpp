// A whole server (attn/server/server.h) on a port the kernel picks, with a small generated model:
// where it listens, what it answers, options and ports it refuses (naming why), reloads, stopping.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/server/server.h"
#include "server_test_util.h"

using attn::server::ServeOptions;
using attn::server::Server;

namespace {

/// What the server logs, from whichever thread.
struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex);
      lines.push_back(line);
    };
  }
  std::vector<std::string> all() {
    std::lock_guard<std::mutex> lock(mutex);
    return lines;
  }
  /// The port of the first "listening on http://HOST:PORT" line (0: none).
  int port() {
    for (const std::string& line : all())
      if (line.rfind("listening on http://", 0) == 0) return std::stoi(line.substr(line.rfind(':') + 1));
    return 0;
  }
  bool contains(const std::string& text) {
    for (const std::string& line : all())
      if (line.find(text) != std::string::npos) return true;
    return false;
  }
};

/// A TCP socket connected to 127.0.0.1:port (-1 and errno when refused).
int connect_local(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

/// Whether anything accepts connections on 127.0.0.1:port.
bool listening_on(int port) {
  const int fd = connect_local(port);
  if (fd < 0) {
    CHECK(errno == ECONNREFUSED);
    return false;
  }
  ::close(fd);
  return true;
}

struct Answer {
  int status = 0;
  std::string body;
};

/// One request on its own connection, its answer read whole (by its Content-Length).
Answer answer_of(int port, const std::string& method, const std::string& path, const std::string& body = "") {
  const int fd = connect_local(port);
  REQUIRE(fd >= 0);
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nConnection: close\r\n";
  if (method == "POST") request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    REQUIRE(n > 0);
    sent += static_cast<std::size_t>(n);
  }
  std::string in;
  std::size_t head_end = std::string::npos, length = 0;
  char buffer[4096];
  while (head_end == std::string::npos || in.size() < head_end + 4 + length) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    REQUIRE(n > 0);  // the server closed before its whole answer
    in.append(buffer, static_cast<std::size_t>(n));
    if (head_end == std::string::npos && (head_end = in.find("\r\n\r\n")) != std::string::npos) {
      std::string head = in.substr(0, head_end);
      for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const std::size_t field = head.find("\r\ncontent-length:");
      REQUIRE(field != std::string::npos);
      length = std::stoul(head.substr(field + 17));
    }
  }
  ::close(fd);
  REQUIRE(in.rfind("HTTP/1.1 ", 0) == 0);
  return {std::stoi(in.substr(9, 3)), in.substr(head_end + 4, length)};
}

ServeOptions options_for(const std::vector<std::string>& models) {
  ServeOptions o;
  o.port = 0;
  o.models = models;
  o.http_threads = 1;
  return o;
}

/// A port this test holds listening on 127.0.0.1 (closed when it goes).
struct HeldPort {
  HeldPort() : fd(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
    port = ntohs(address.sin_port);
  }
  ~HeldPort() { ::close(fd); }
  int fd, port = 0;
};

}  // namespace

TEST_CASE("a server listens where it says, is ready once its models are, and stops accepting when stopped", "[server][server]") {
  const auto dir = tasks_test::scratch("server_start");
  LogLines log;
  Server server(options_for({"m=" + server_test::feature_model(dir / "run")}), log.sink());
  const std::vector<std::string> lines = log.all();
  REQUIRE(lines.size() == 3);
  const int port = log.port();
  CHECK(lines[0] == "listening on http://127.0.0.1:" + std::to_string(port));
  CHECK(port > 0);  // the free port the kernel picked, not 0
  CHECK_THAT(lines[1], Catch::StartsWith("loaded m: feature-attention from "));
  CHECK(lines[2] == "ready");
  const Answer alive = answer_of(port, "GET", "/healthz");
  CHECK(alive.status == 200);
  CHECK(nlohmann::json::parse(alive.body) == nlohmann::json{{"status", "alive"}});
  const Answer ready = answer_of(port, "GET", "/readyz");
  CHECK(ready.status == 200);
  CHECK(nlohmann::json::parse(ready.body) == nlohmann::json{{"status", "ready"}, {"models", 1}});
  server.stop();
  CHECK_FALSE(listening_on(port));
  server.stop();  // a second stop (and the destructor's) does nothing
  tasks_test::fs::remove_all(dir);
}

TEST_CASE("predictions, explanations and the model list over HTTP are the model's own", "[server][server]") {
  const auto dir = tasks_test::scratch("server_infer");
  const std::string run = server_test::feature_model(dir / "run");
  LogLines log;
  Server server(options_for({"m=" + run}), log.sink());
  const int port = log.port();
  const auto model = attn::tasks::open_model(run);
  const std::vector<attn::tasks::Input> rows = {{"", {0.5f, 0.1f}}, {"", {0.0f, 0.4f}}};
  const Answer predicted = answer_of(port, "POST", "/v1/predict", R"({"rows": [[0.5, 0.1], [0.0, 0.4]]})");
  REQUIRE(predicted.status == 200);
  const auto predictions = nlohmann::ordered_json::parse(predicted.body);
  CHECK(predictions.at("model") == "m");
  CHECK(predictions.at("results") == nlohmann::ordered_json(model->predict(rows, 8)));
  const Answer explained = answer_of(port, "POST", "/v1/explain", R"({"model": "m", "rows": [[0.5, 0.1]], "methods": ["gradient"]})");
  REQUIRE(explained.status == 200);
  const auto explanation = nlohmann::ordered_json::parse(explained.body).at("results").at(0);
  CHECK(explanation.at("probability").get<double>() == Approx(predictions.at("results").at(0).at("probability").get<double>()));
  CHECK(explanation.at("features").size() == 2);
  CHECK(explanation.at("features").at(0).at("feature") == "a");
  CHECK(explanation.at("importance").dump().find("gradient") != std::string::npos);
  const Answer listed = answer_of(port, "GET", "/v1/models");
  REQUIRE(listed.status == 200);
  const auto models = nlohmann::json::parse(listed.body).at("models");
  REQUIRE(models.size() == 1);
  CHECK(models[0].at("name") == "m");
  CHECK(models[0].at("features") == nlohmann::json::array({"a", "b"}));
  // What a caller gets wrong is answered by status, naming it.
  const Answer unknown = answer_of(port, "POST", "/v1/predict", R"({"model": "nope", "rows": [[1, 2]]})");
  CHECK(unknown.status == 404);
  CHECK_THAT(unknown.body, Catch::Contains("no model 'nope' (models: m)"));
  const Answer texts = answer_of(port, "POST", "/v1/predict", R"({"texts": ["hello"]})");
  CHECK(texts.status == 400);
  CHECK_THAT(texts.body, Catch::Contains("reads \\\"rows\\\""));
  const Answer wide = answer_of(port, "POST", "/v1/predict", R"({"rows": [[1, 2, 3]]})");
  CHECK(wide.status == 400);
  CHECK_THAT(wide.body, Catch::Contains("a row needs 2 feature values, got 3"));
  // Every answer so far is counted (before it is written).
  const Answer metrics = answer_of(port, "GET", "/metrics");
  CHECK_THAT(metrics.body, Catch::Contains("attn_requests_total{route=\"/v1/predict\",status=\"200\"} 1\n") &&
                               Catch::Contains("attn_requests_total{route=\"/v1/predict\",status=\"400\"} 2\n") &&
                               Catch::Contains("attn_models_loaded 1\n"));
  tasks_test::fs::remove_all(dir);
}

TEST_CASE("reload_all (SIGHUP): a corrupt file leaves the loaded model serving, a sound one is swapped in", "[server][server]") {
  const auto dir = tasks_test::scratch("server_reload");
  const std::string run = server_test::feature_model(dir / "run");
  LogLines log;
  Server server(options_for({"m=" + run}), log.sink());
  const int port = log.port();
  const auto sha256 = [port] { return nlohmann::json::parse(answer_of(port, "GET", "/v1/models").body).at("models").at(0).at("sha256"); };
  const std::string before = sha256();
  std::ofstream(run + "/model.pt", std::ios::binary | std::ios::trunc) << "not a model";
  server.reload_all();
  CHECK(log.contains("reload of m failed, the loaded model still serves: model 'm' (" + run + "): "));
  CHECK(answer_of(port, "POST", "/v1/predict", R"({"rows": [[0.5, 0.1]]})").status == 200);
  CHECK(sha256() == before);
  server_test::feature_model(dir / "run", 2);
  server.reload_all();
  const std::string after = sha256();
  CHECK(after != before);
  CHECK(log.contains("reloaded m (sha256 " + after.substr(0, 12) + ")"));
  CHECK(answer_of(port, "POST", "/v1/predict", R"({"rows": [[0.5, 0.1]]})").status == 200);
  const std::string metrics = answer_of(port, "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("attn_model_reloads_total{model=\"m\",result=\"failed\"} 1\n") &&
                          Catch::Contains("attn_model_reloads_total{model=\"m\",result=\"ok\"} 1\n"));
  tasks_test::fs::remove_all(dir);
}

TEST_CASE("a port already taken is refused naming the address, before any model is read", "[server][server]") {
  const HeldPort held;
  ServeOptions o = options_for({"m=/nonexistent/model.pt"});
  o.port = held.port;
  LogLines log;
  CHECK_THROWS_WITH(Server(o, log.sink()), Catch::StartsWith("cannot listen on 127.0.0.1:" + std::to_string(held.port) + ": "));
  CHECK(log.all().empty());
}

TEST_CASE("options a server cannot run with are refused naming the flag, before it binds", "[server][server]") {
  const HeldPort held;  // each would bind it and fail otherwise
  const auto refusal = [&held](void (*change)(ServeOptions&)) {
    ServeOptions o = options_for({"m=/nonexistent/model.pt"});
    o.port = held.port;
    change(o);
    LogLines log;
    try {
      Server server(o, log.sink());
    } catch (const std::invalid_argument& e) {
      CHECK(log.all().empty());
      return std::string(e.what());
    }
    return std::string("(started)");
  };
  CHECK_THAT(refusal([](ServeOptions& o) { o.port = 65536; }), Catch::Contains("--port must be in 0..65535"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.max_batch = 0; }), Catch::Contains("--max-batch"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.workers = 0; }), Catch::Contains("--threads"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.max_steps = 1 << 20; }), Catch::StartsWith("--max-steps must be in 1.."));
  CHECK_THAT(refusal([](ServeOptions& o) { o.models.clear(); }), Catch::Contains("--model NAME=PATH is required"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.models.push_back("m=/other/model.pt"); }), Catch::Contains("two models are called 'm'"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.api_key_file = "/keys", o.api_key = "0123456789abcdef"; }),
             Catch::Contains("--api-key-file or ATTN_API_KEY, not both"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.api_key = "short"; }), Catch::Contains("ATTN_API_KEY"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.host = "0.0.0.0"; }), Catch::Contains("--allow-unauthenticated"));
  CHECK_THAT(refusal([](ServeOptions& o) { o.tls_cert = "cert.pem"; }), Catch::Contains("--tls-cert and --tls-key go together"));
}

TEST_CASE("a model that cannot be loaded stops the start with an error naming it, and lets the port go", "[server][server]") {
  LogLines log;
  CHECK_THROWS_WITH(Server(options_for({"m=/nonexistent/model.pt"}), log.sink()), Catch::StartsWith("model 'm' (/nonexistent/model.pt): "));
  const int port = log.port();
  REQUIRE(port > 0);  // it had bound, then read the model
  CHECK_FALSE(log.contains("ready"));
  CHECK_FALSE(listening_on(port));
}

TEST_CASE("--model names a model after its argument", "[server][server]") {
  using attn::server::parse_model_argument;
  using Named = std::pair<std::string, std::string>;
  CHECK(parse_model_argument("toxic=runs/a/model.pt") == Named("toxic", "runs/a/model.pt"));
  CHECK(parse_model_argument("x=y=z") == Named("x", "y=z"));
  CHECK(parse_model_argument("runs/toxic") == Named("toxic", "runs/toxic"));
  CHECK(parse_model_argument("runs/toxic/model.pt") == Named("toxic", "runs/toxic/model.pt"));  // a run directory's file
  CHECK(parse_model_argument("exports/dates.pt") == Named("dates", "exports/dates.pt"));
  CHECK(parse_model_argument("runs/toxic/") == Named("toxic", "runs/toxic/"));  // as a shell completes a directory
  CHECK(parse_model_argument("model.pt") == Named("model", "model.pt"));
  CHECK_THROWS_WITH(parse_model_argument("=runs/toxic"), Catch::Contains("--model: expected NAME=PATH, got '=runs/toxic'"));
  CHECK_THROWS_WITH(parse_model_argument("toxic="), Catch::Contains("--model: expected NAME=PATH"));
  CHECK_THROWS_WITH(parse_model_argument("/"), Catch::Contains("--model: cannot name '/'"));
}
