// The front end's judgement of when a request has arrived whole (server/src/front.h): a request is
// handed to an HTTP thread only then, so a wrong "complete" would block a thread on a slow client
// and a wrong "incomplete" would leave a request unanswered.
#include <string>

#include <catch2/catch.hpp>

#include "front.h"

using attn::server::request_extent;

namespace {

constexpr std::size_t kHead = 1024, kBody = 100;

std::string post(const std::string& headers, const std::string& body) {
  return "POST /v1/predict HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n" + body;
}

}  // namespace

TEST_CASE("a request is whole once its headers and its Content-Length bytes arrived", "[front]") {
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  for (std::size_t n = 0; n < get.size(); ++n) {
    const auto e = request_extent(get.substr(0, n), kHead, kBody);
    CHECK((!e.complete && e.status == 0));
  }
  CHECK(request_extent(get, kHead, kBody).complete);
  CHECK(request_extent(get, kHead, kBody).length == get.size());

  const std::string body = "{\"texts\": [\"a\"]}";
  const std::string whole = post("Content-Length: " + std::to_string(body.size()) + "\r\n", body);
  for (std::size_t n = 0; n < whole.size(); ++n) CHECK_FALSE(request_extent(whole.substr(0, n), kHead, kBody).complete);
  const auto e = request_extent(whole, kHead, kBody);
  CHECK(e.complete);
  CHECK(e.length == whole.size());
  // A pipelined second request is not part of the first.
  CHECK(request_extent(whole + get, kHead, kBody).length == whole.size());
  // Header names in any case, values with spaces around them.
  CHECK(request_extent(post("content-LENGTH:   3 \r\n", "abc"), kHead, kBody).complete);
}

TEST_CASE("chunked bodies are whole at their last chunk and its trailers", "[front]") {
  const std::string chunks = "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n";
  const std::string whole = post("Transfer-Encoding: chunked\r\n", chunks);
  for (std::size_t n = 0; n < whole.size(); ++n) CHECK_FALSE(request_extent(whole.substr(0, n), kHead, kBody).complete);
  CHECK(request_extent(whole, kHead, kBody).length == whole.size());
  const std::string trailers = post("Transfer-Encoding: chunked\r\n", "1\r\na\r\n0\r\nX-T: 1\r\n\r\n");
  CHECK(request_extent(trailers, kHead, kBody).length == trailers.size());
  CHECK(request_extent(post("Transfer-Encoding: chunked\r\n", "zz\r\n"), kHead, kBody).status == 400);
}

TEST_CASE("oversized and ambiguous requests are refused before any thread reads them", "[front]") {
  // Headers over the limit, complete or not: 431.
  CHECK(request_extent("GET / HTTP/1.1\r\nX: " + std::string(kHead, 'a'), kHead, kBody).status == 431);
  CHECK(request_extent("GET / HTTP/1.1\r\nX: " + std::string(kHead, 'a') + "\r\n\r\n", kHead, kBody).status == 431);
  // A body over the limit is refused at its Content-Length, before it is sent: 413.
  CHECK(request_extent(post("Content-Length: 101\r\n", ""), kHead, kBody).status == 413);
  CHECK(request_extent(post("Content-Length: 100\r\n", ""), kHead, kBody).status == 0);
  CHECK(request_extent(post("Transfer-Encoding: chunked\r\n", "65\r\n"), kHead, kBody).status == 413);  // 0x65 = 101
  // Framing a proxy and the server could read differently (request smuggling): 400.
  CHECK(request_extent(post("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "abc"), kHead, kBody).status == 400);
  CHECK(request_extent(post("Content-Length: 3\r\nContent-Length: 4\r\n", "abcd"), kHead, kBody).status == 400);
  CHECK(request_extent(post("Content-Length: -1\r\n", ""), kHead, kBody).status == 400);
  CHECK(request_extent(post("Content-Length: 1e3\r\n", ""), kHead, kBody).status == 400);
  CHECK(request_extent(post("Content-Length: 99999999999999999999\r\n", ""), kHead, kBody).status == 400);
  // The same length twice is fine.
  CHECK(request_extent(post("Content-Length: 1\r\nContent-Length: 1\r\n", "a"), kHead, kBody).complete);
}
