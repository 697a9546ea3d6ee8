#include <filesystem>
#include <sstream>
#include <vector>

#include <caffe2/serialize/inline_container.h>
#include <torch/script.h>
#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/pickle_check.h"
#include "attn/io/prepared_data.h"

using namespace attn;

namespace {
std::string python_pickle(int protocol) {  // fixtures/pickle/README.md says how they were made
  return io::read_file(std::string(ATTN_FIXTURES) + "/pickle/protocol" + std::to_string(protocol) + ".pkl");
}

/// The record `name` (e.g. "data.pkl") of a LibTorch archive held in memory.
std::string record_of(const std::string& archive, const std::string& name) {
  std::istringstream in(archive);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  const auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

/// data.pkl of a TorchScript module with parameters `a` [2, 3] and `b` [4] (float) and a buffer
/// `c` that views `a`'s storage, as LibTorch saves it (memoised strings and globals, fetched again by BINGET).
std::string module_pickle() {
  torch::jit::Module m("m");
  const torch::Tensor a = torch::ones({2, 3});
  m.register_parameter("a", a, false);
  m.register_parameter("b", torch::ones({4}), false);
  m.register_buffer("c", a.view({6}));
  std::ostringstream out;
  m.save(out);
  return record_of(out.str(), "data.pkl");
}

std::string pickled(const std::string& body) { return std::string("\x80\x02", 2) + body + "."; }
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

TEST_CASE("check_pickle: lists the tensor storages a LibTorch pickle refers to, each once", "[io][pickle]") {
  const std::vector<io::PickledStorage> module = io::check_pickle(module_pickle(), "m.pt: data.pkl");
  REQUIRE(module.size() == 2);  // `c` shares `a`'s storage
  CHECK(module[0].key == "0");
  CHECK(module[0].type == "FloatStorage");
  CHECK(module[0].numel == 6);
  CHECK(module[0].bytes == 24);
  CHECK(module[1].key == "1");
  CHECK(module[1].numel == 4);
  CHECK(module[1].bytes == 16);
  // What torch::save writes for attn's prepared data (a Python-style pickle: MARK ... TUPLE, BINPERSID).
  io::PreparedData d;
  d.x = text::pad_sequences(std::vector<text::Sequence>{{1, 2}, {3}}, text::PadOptions{3});
  d.ids = {"a", "b"};
  const std::string path = (std::filesystem::temp_directory_path() / "attn_pickle_check_test.pt").string();
  io::write_prepared(path, d);
  const std::vector<io::PickledStorage> data = io::check_pickle(record_of(io::read_file(path), "data.pkl"), "data.pt: data.pkl");
  std::filesystem::remove(path);
  REQUIRE(!data.empty());
  CHECK(data[0].type == "IntStorage");
  CHECK(data[0].numel == 6);  // x: 2 rows of 3
  CHECK(data[0].bytes == 24);
  // Python's own pickles have no persistent ids.
  for (const int protocol : {0, 2, 4}) CHECK(io::check_pickle(python_pickle(protocol), "p.pkl").empty());
}

TEST_CASE("check_pickle: a persistent id that is not a storage, an unknown storage type or a broken stack is refused", "[io][pickle]") {
  const std::string cpu = std::string(
                        "X\x03\x00\x00\x00"
                        "cpu",
                        8),
                    key = std::string(
                        "X\x01\x00\x00\x00"
                        "0",
                        6);
  const std::string storage = std::string(
      "X\x07\x00\x00\x00"
      "storage",
      12);
  // ('storage', torch.FloatStorage, '0', 'cpu', 3): a well-formed one first.
  const std::string good = pickled("(" + storage + "ctorch\nFloatStorage\n" + key + cpu + "K\x03tQ");
  REQUIRE(io::check_pickle(good, "p").size() == 1);
  CHECK(io::check_pickle(good, "p")[0].bytes == 12);
  CHECK_THROWS_WITH(
      io::check_pickle(pickled(cpu + "Q"), "p"),
      "p: corrupt pickle at byte 10: a persistent id that is not a tensor storage ('storage', torch.<Type>Storage, key, location, numel)");
  CHECK_THROWS_WITH(io::check_pickle(pickled("(" + storage + "ctorch\nFooStorage\n" + key + cpu + "K\x03tQ"), "p"),
                    Catch::EndsWith("an unknown storage type torch.FooStorage"));
  CHECK_THROWS_WITH(io::check_pickle(pickled("(" + storage + "ctorch\nFloatStorage\n" + key + cpu + "J\xff\xff\xff\xfftQ"), "p"),
                    Catch::EndsWith("storage '0' has -1 elements"));
  CHECK_THROWS_WITH(io::check_pickle(pickled("NR"), "p"), "p: corrupt pickle at byte 3: an opcode takes more values than the stack holds");
  CHECK_THROWS_WITH(io::check_pickle(pickled("Nt"), "p"), Catch::EndsWith("an opcode takes the values since a MARK, and there is none"));
  CHECK_THROWS_WITH(io::check_pickle(pickled("h\x07"), "p"), "p: corrupt pickle at byte 2: a memo index of 7 that nothing was put at");
}
