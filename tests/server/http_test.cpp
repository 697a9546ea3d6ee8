// The connection layer (server/src/http.h) with a stand-in handler, over real sockets on 127.0.0.1: a
// handler may answer later from another thread while other connections are served; a request refused
// before its body is read closes its connection, so the body never runs as a request; pipelined
// requests are answered in order; the loopback test parses addresses. Latches, no sleeps.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "http.h"

using namespace attn::server;

namespace {

/// GET /now: answered at once; GET /hold: answered when the test says (from its own thread);
/// POST /secret: refused (401) before its body is read.
class StandIn : public HttpHandler {
 public:
  std::optional<Response> accept(Head& head) override {
    if (head.path == "/secret") return error_response(401, "no key");
    return std::nullopt;
  }
  void handle(Request request, Respond respond) override {
    std::lock_guard<std::mutex> lock(mutex_);
    handled.push_back(request.head.path);
    if (request.head.path == "/hold") {
      held_ = respond;
      changed_.notify_all();
      return;
    }
    Response r;
    r.body = "{\"path\":\"" + request.head.path + "\"}";
    respond(r);
  }
  void refused(const std::string& reason, int) override {
    std::lock_guard<std::mutex> lock(mutex_);
    reasons.push_back(reason);
  }
  /// Waits until /hold has reached the handler; its answer.
  Respond wait_held() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return held_ != nullptr; });
    return held_;
  }
  std::vector<std::string> handled, reasons;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  Respond held_;
};

class Client {
 public:
  explicit Client(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Client() { ::close(fd_); }
  void send(const std::string& bytes) {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  }
  /// Reads until `text` has arrived (or the server closed).
  std::string read_until(const std::string& text) {
    while (got_.find(text) == std::string::npos) {
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got_.append(buf, static_cast<std::size_t>(n));
    }
    return got_;
  }
  /// Everything until the server closes.
  std::string read_all() { return read_until(std::string(1, '\0') + "never"); }

 private:
  int fd_;
  std::string got_;
};

HttpOptions options() {
  HttpOptions o;
  o.port = 0;
  o.threads = 1;
  return o;
}

/// A server on one event thread with the stand-in handler, listening on a free loopback port.
struct Serving {
  StandIn handler;
  HttpServer server{options(), handler};
  int port = server.bind();
  Serving() { server.start(); }
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a handler answers later from another thread while other connections are served", "[server][http]") {
  Serving s;
  Client held(s.port);
  held.send("GET /hold HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const Respond later = s.handler.wait_held();
  Client other(s.port);  // the one event thread is free: nothing waits for /hold's answer
  other.send("GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  const std::string now = other.read_all();
  CHECK(now.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(now.find("{\"path\":\"/now\"}") != std::string::npos);
  Response r;
  r.body = "{\"late\":true}";
  std::thread([later, r] { later(r); }).join();
  CHECK(held.read_until("{\"late\":true}").find("{\"late\":true}") != std::string::npos);
  s.server.stop();
}

TEST_CASE("a request refused before its body is read closes the connection: the body never runs", "[server][http]") {
  Serving s;
  const std::string smuggled = "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  Client c(s.port);
  c.send("POST /secret HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled);
  const std::string got = c.read_all();
  CHECK(count(got, "HTTP/1.1 ") == 1);
  CHECK(got.rfind("HTTP/1.1 401 ", 0) == 0);
  CHECK(got.find("Connection: close") != std::string::npos);
  s.server.stop();
  CHECK(s.handler.handled.empty());
}

TEST_CASE("pipelined requests are answered in order, ambiguous framing ends the connection", "[server][http]") {
  Serving s;
  Client c(s.port);
  c.send(
      "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
      "POST /c HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /d HTTP/1.1\r\nHost: h\r\n\r\n");
  const std::string got = c.read_all();
  const std::size_t a = got.find("/a"), b = got.find("/b");
  CHECK((a != std::string::npos && b != std::string::npos && a < b));
  CHECK(count(got, "HTTP/1.1 ") == 3);  // /a, /b, then a 400 for /c and nothing for /d
  CHECK(got.find("HTTP/1.1 400 ") != std::string::npos);
  CHECK(got.find("/d") == std::string::npos);
  s.server.stop();
  CHECK(s.handler.handled == std::vector<std::string>{"/a", "/b"});
  CHECK(s.handler.reasons == std::vector<std::string>{"framing"});
}

TEST_CASE("loopback is judged on the parsed address, not a prefix", "[server][http]") {
  for (const char* host : {"127.0.0.1", "127.0.0.2", "::1", "[::1]", "::ffff:127.0.0.1", "localhost", "LocalHost"})
    CHECK(is_loopback(host));
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "example.com", "1127.0.0.1", "127.0.0.1.attacker.invalid"})
    CHECK_FALSE(is_loopback(host));
}

TEST_CASE("header fields are found in any case, values as sent", "[server][http]") {
  Head head;
  head.fields = {{"Authorization", "Bearer ab%41cd"}, {"X-A", "1"}, {"x-a", "2"}};
  CHECK(head.field("authorization") == std::optional<std::string>("Bearer ab%41cd"));
  CHECK(head.field("X-A") == std::optional<std::string>("1"));
  CHECK_FALSE(head.field("Host").has_value());
  const Response e = error_response(413, "too big \xff");
  CHECK(e.status == 413);
  CHECK(e.body.find("\"status\":413") != std::string::npos);
}
