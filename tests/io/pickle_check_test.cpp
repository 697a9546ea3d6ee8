#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/pickle_check.h"

using namespace attn;

namespace {
std::string python_pickle(int protocol) {  // fixtures/pickle/README.md says how they were made
  return io::read_file(std::string(ATTN_FIXTURES) + "/pickle/protocol" + std::to_string(protocol) + ".pkl");
}
}  // namespace

TEST_CASE("check_pickle: what Python's pickle writes (protocols 0, 2, 4) passes", "[io][pickle]") {
  for (const int protocol : {0, 2, 4}) {
    INFO("protocol " << protocol);
    CHECK_NOTHROW(io::check_pickle(python_pickle(protocol), "p.pkl"));
  }
  CHECK_NOTHROW(io::check_pickle(io::read_file(std::string(ATTN_FIXTURES) + "/pickle/memo300.pkl"), "memo300.pkl"));
}

TEST_CASE("check_pickle: a length past the end, a cut, an unknown opcode or no STOP is refused where it is", "[io][pickle]") {
  const std::string p2 = python_pickle(2);
  // BINUNICODE (X) with a 4-byte length of 2^31 over 4 remaining bytes (how a corrupt model.pt
  // made LibTorch allocate).
  CHECK_THROWS_WITH(io::check_pickle(std::string("\x80\x02X\x00\x00\x00\x80"
                                                 "abc.",
                                                 11),
                                     "m.pt: data.pkl"),
                    "m.pt: data.pkl: corrupt pickle at byte 2: a length of 2147483648 bytes where 4 remain");
  CHECK_THROWS_WITH(io::check_pickle(std::string("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff.", 12), "p"),
                    Catch::Contains("corrupt pickle at byte 2: a length of 18446744073709551615 bytes"));
  for (std::size_t cut = 1; cut < p2.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK_THROWS_WITH(io::check_pickle(p2.substr(0, cut), "p"), Catch::Contains("p: corrupt pickle at byte"));
  }
  CHECK_THROWS_WITH(io::check_pickle(std::string("\x80\x02\xff.", 4), "p"), "p: corrupt pickle at byte 2: unknown opcode 255");
  CHECK_THROWS_WITH(io::check_pickle(std::string("\x80\x02N", 3), "p"), "p: corrupt pickle at byte 3: no STOP opcode (truncated)");
  CHECK_THROWS_WITH(io::check_pickle("cbuiltins\nlen", "p"), "p: corrupt pickle at byte 0: a line without its newline");
  CHECK_THROWS_WITH(io::check_pickle(std::string("\x80", 1), "p"), "p: corrupt pickle at byte 0: truncated argument");
  // LONG_BINPUT of index 2^30 (LibTorch would grow its memo table to 2^30 entries: 16 GB)
  CHECK_THROWS_WITH(io::check_pickle(std::string("\x80\x02Nr\x00\x00\x00\x40.", 9), "p"),
                    "p: corrupt pickle at byte 3: a memo index of 1073741824 in a pickle of 9 bytes");
  CHECK_THROWS_WITH(io::check_pickle("", "p"), "p: corrupt pickle at byte 0: no STOP opcode (truncated)");
}
