// The book of open connections (server/src/connections.h) without a socket: the per-client cap, the
// connection that makes room when the server is full, and a full server of busy connections.
#include <chrono>
#include <memory>

#include <catch2/catch.hpp>

#include "connections.h"

using attn::server::Connection;
using attn::server::ConnectionRegistry;
using attn::server::Phase;
using Admission = ConnectionRegistry::Admission;

namespace {

struct FakeConnection : Connection {
  void abort() override { ++aborted; }
  void stop_if_quiet() override { ++stopped; }
  int aborted = 0, stopped = 0;
};

const ConnectionRegistry::Clock::time_point kStart{};
ConnectionRegistry::Clock::time_point moment(int seconds) { return kStart + std::chrono::seconds(seconds); }

}  // namespace

TEST_CASE("a client past its share is refused, and its refusal counts toward nothing", "[server][connections]") {
  ConnectionRegistry book(10, 2);
  CHECK(book.admit("10.0.0.1", moment(0)).admission == Admission::kAdmitted);
  CHECK(book.admit("10.0.0.1", moment(1)).admission == Admission::kAdmitted);
  const auto third = book.admit("10.0.0.1", moment(2));
  CHECK(third.admission == Admission::kPerClient);
  CHECK(third.evicted == nullptr);
  CHECK(book.admit("10.0.0.2", moment(3)).admission == Admission::kAdmitted);  // another address is not held back
  CHECK(book.size() == 4);                                                     // the refused one until it closes
  book.remove(third.id);
  CHECK(book.admit("10.0.0.1", moment(4)).admission == Admission::kPerClient);  // its two are still open
}

TEST_CASE("a full server closes the connection idle longest, then the request that began first", "[server][connections]") {
  ConnectionRegistry book(3, 10);
  auto a = std::make_shared<FakeConnection>(), b = std::make_shared<FakeConnection>(), c = std::make_shared<FakeConnection>();
  const auto ia = book.admit("a", moment(0)).id, ib = book.admit("b", moment(0)).id, ic = book.admit("c", moment(0)).id;
  book.attach(ia, a);
  book.attach(ib, b);
  book.attach(ic, c);
  book.phase(ia, Phase::kReading, moment(1));
  book.phase(ib, Phase::kIdle, moment(5));
  book.phase(ic, Phase::kIdle, moment(3));  // idle longer than b
  auto first = book.admit("d", moment(6));
  CHECK(first.admission == Admission::kAdmitted);
  CHECK(first.evicted == c);
  auto second = book.admit("e", moment(7));
  CHECK(second.evicted == b);
  book.phase(first.id, Phase::kBusy, moment(7));
  book.phase(second.id, Phase::kReading, moment(8));  // began after a's request
  auto third = book.admit("f", moment(9));
  CHECK(third.admission == Admission::kAdmitted);
  CHECK(third.evicted == a);
}

TEST_CASE("a server whose every connection runs a request answers the next one 503", "[server][connections]") {
  ConnectionRegistry book(2, 10);
  const auto x = book.admit("x", moment(0)).id, y = book.admit("y", moment(0)).id;
  book.phase(x, Phase::kBusy, moment(1));
  book.phase(y, Phase::kWriting, moment(1));
  const auto refused = book.admit("z", moment(2));
  CHECK(refused.admission == Admission::kSaturated);
  CHECK(refused.evicted == nullptr);
  book.remove(refused.id);
  book.remove(x);
  CHECK(book.admit("z", moment(3)).admission == Admission::kAdmitted);  // room again once one closes
}

TEST_CASE("the book holds its connections weakly and waits for the last to go", "[server][connections]") {
  ConnectionRegistry book(4, 4);
  const auto id = book.admit("a", moment(0)).id;
  {
    auto gone = std::make_shared<FakeConnection>();
    book.attach(id, gone);
    CHECK(book.all().size() == 1);
  }
  CHECK(book.all().empty());  // the registry kept nothing alive
  CHECK(book.size() == 1);
  book.remove(id);
  book.remove(id);  // twice is harmless
  book.wait_empty();
  CHECK(book.size() == 0);
}
