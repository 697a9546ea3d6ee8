// A request head judged before its body is read (server/src/framing.h), without a socket: each
// framing that could be read two ways refused with its status and reason, the sound ones passed.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "framing.h"

using attn::server::Framing;
using attn::server::framing_refusal;
using attn::server::Head;

namespace {

Head head(const std::string& method, std::vector<std::pair<std::string, std::string>> fields, const std::string& target = "/v1/explain") {
  Head h;
  h.method = method;
  h.target = target;
  h.fields = std::move(fields);
  return h;
}

int status(const Head& h, const Framing& f) {
  const auto refusal = framing_refusal(h, f);
  return refusal ? refusal->status : 0;
}

}  // namespace

TEST_CASE("sound heads pass", "[server][framing]") {
  CHECK(status(head("GET", {{"Host", "a"}}, "/healthz"), {11, false, std::nullopt}) == 0);
  CHECK(status(head("POST", {{"host", "a"}, {"Content-Length", "2"}}), {11, false, 2}) == 0);
  CHECK(status(head("POST", {{"Host", "a"}, {"Transfer-Encoding", " Chunked "}}), {11, true, std::nullopt}) == 0);
  CHECK(status(head("POST", {{"Host", "a"}, {"Expect", "100-Continue"}}), {11, false, 5}) == 0);
  CHECK(status(head("POST", {{"Host", "a"}, {"Content-Encoding", "identity"}}), {11, false, 5}) == 0);
  CHECK(status(head("GET", {}, "/"), {10, false, std::nullopt}) == 0);  // HTTP/1.0 needs no Host
}

TEST_CASE("framing that could be read two ways is refused with 400", "[server][framing]") {
  const auto refusal = framing_refusal(head("POST", {{"Host", "a"}, {"Host", "b"}}), {11, false, 2});
  REQUIRE(refusal);
  CHECK(refusal->status == 400);
  CHECK(refusal->reason == "framing");
  CHECK(refusal->message.find("Host") != std::string::npos);
  CHECK(status(head("GET", {}), {11, false, std::nullopt}) == 400);                             // no Host on 1.1
  CHECK(status(head("GET", {{"Host", "a"}}, "http://a/x"), {11, false, std::nullopt}) == 400);  // not a path
  CHECK(status(head("POST", {{"Host", "a"}, {"Transfer-Encoding", "gzip, chunked"}}), {11, true, std::nullopt}) == 400);
  CHECK(status(head("POST", {{"Host", "a"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}),
               {11, true, std::nullopt}) == 400);
  CHECK(status(head("POST", {{"Transfer-Encoding", "chunked"}}), {10, true, std::nullopt}) == 400);  // not in 1.0
  CHECK(status(head("GET", {{"Host", "a"}, {"Content-Length", "3"}}), {11, false, 3}) == 400);       // GET takes no body
  CHECK(status(head("GET", {{"Host", "a"}, {"Content-Length", "0"}}), {11, false, 0}) == 0);         // an empty one is none
}

TEST_CASE("a missing length, an encoding, an expectation and a version each have their status", "[server][framing]") {
  const auto length = framing_refusal(head("POST", {{"Host", "a"}}), {11, false, std::nullopt});
  REQUIRE(length);
  CHECK(length->status == 411);
  CHECK(length->reason == "length_required");
  const auto gzip = framing_refusal(head("POST", {{"Host", "a"}, {"Content-Encoding", "gzip"}}), {11, false, 9});
  REQUIRE(gzip);
  CHECK(gzip->status == 415);
  CHECK(gzip->message.find("'gzip'") != std::string::npos);
  CHECK(status(head("POST", {{"Host", "a"}, {"Expect", "something-else"}}), {11, false, 9}) == 417);
  CHECK(status(head("GET", {{"Host", "a"}}), {20, false, std::nullopt}) == 505);
  CHECK(status(head("GET", {{"Host", "a"}}), {9, false, std::nullopt}) == 505);
}

TEST_CASE("folded header lines are found", "[server][framing]") {
  using attn::server::folded;
  CHECK_FALSE(folded("POST / HTTP/1.1\r\nHost: a\r\nX: 1\r\n"));
  CHECK(folded("POST / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n"));
  CHECK(folded("POST / HTTP/1.1\r\nX: 1\r\n\t2\r\n"));
  CHECK(attn::server::takes_no_body("DELETE"));
  CHECK_FALSE(attn::server::takes_no_body("POST"));
  CHECK(attn::server::trim(" \tv \t") == "v");
  CHECK(attn::server::iequals("Content-Length", "content-length"));
  CHECK_FALSE(attn::server::iequals("Content-Length", "content-lengt"));
}
