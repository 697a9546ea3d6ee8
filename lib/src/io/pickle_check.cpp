#include "attn/io/pickle_check.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>

namespace attn::io {
namespace {

/// How an opcode's argument is laid out (Python's pickletools lists them).
enum class Arg {
  kNone,       // no argument
  kFixed,      // `size` bytes
  kLine,       // one newline-terminated line
  kTwoLines,   // two lines (GLOBAL, INST)
  kLength,     // a little-endian length of `size` bytes, then that many bytes
  kBadOpcode,  // not a pickle opcode
};

struct Layout {
  Arg arg = Arg::kBadOpcode;
  int size = 0;
};

using LayoutTable = std::array<Layout, 256>;

void set_layout(LayoutTable& table, std::initializer_list<int> ops, Layout layout) {
  for (int op : ops) table[static_cast<std::size_t>(op)] = layout;
}

/// Each pickle opcode's argument (protocols 0-5).
LayoutTable layout_table() {
  LayoutTable t{};  // (kBadOpcode)
  set_layout(t, {'(', '.', '0', '1',  '2',  'N',  'Q',  'R',  'a',  'b',  'd',  '}',  'e',  'l',  ']',  'o',  's',
                 't', ')', 'u', 0x81, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x97, 0x98},
             {Arg::kNone, 0});
  set_layout(t, {'K', 'h', 'q', 0x80, 0x82}, {Arg::kFixed, 1});  // fixed-size arguments
  set_layout(t, {'M', 0x83}, {Arg::kFixed, 2});
  set_layout(t, {'J', 'j', 'r', 0x84}, {Arg::kFixed, 4});
  set_layout(t, {'G', 0x95}, {Arg::kFixed, 8});
  set_layout(t, {'I', 'L', 'F', 'S', 'V', 'g', 'p', 'P'}, {Arg::kLine, 0});  // text lines
  set_layout(t, {'c', 'i'}, {Arg::kTwoLines, 0});
  set_layout(t, {'U', 'C', 0x8c, 0x8a}, {Arg::kLength, 1});  // length-prefixed data
  set_layout(t, {'T', 'B', 'X', 0x8b}, {Arg::kLength, 4});
  set_layout(t, {0x8d, 0x8e, 0x96}, {Arg::kLength, 8});
  return t;
}

Layout layout_of(unsigned char op) {
  static const LayoutTable table = layout_table();
  return table[op];
}

}  // namespace

void check_pickle(std::string_view bytes, const std::string& what) {
  std::size_t at = 0;
  const auto fail = [&](std::size_t where, const std::string& why) {
    throw std::runtime_error(what + ": corrupt pickle at byte " + std::to_string(where) + ": " + why);
  };
  const auto skip_line = [&](std::size_t start) {
    const std::size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) fail(start, "a line without its newline");
    at = end + 1;
  };
  while (at < bytes.size()) {
    const std::size_t start = at;
    const auto op = static_cast<unsigned char>(bytes[at++]);
    const Layout l = layout_of(op);
    const std::size_t left = bytes.size() - at;
    switch (l.arg) {
      case Arg::kBadOpcode:
        fail(start, "unknown opcode " + std::to_string(op));
        break;  // (not reached: fail throws)
      case Arg::kNone:
        if (op == '.') return;  // STOP
        break;
      case Arg::kFixed:
        if (left < static_cast<std::size_t>(l.size)) fail(start, "truncated argument");
        if (op == 'r') {  // LONG_BINPUT: LibTorch grows its memo table to the index, so bound it
          std::uint64_t index = 0;
          for (int i = 3; i >= 0; --i) index = (index << 8) | static_cast<unsigned char>(bytes[at + i]);
          if (index >= bytes.size())
            fail(start, "a memo index of " + std::to_string(index) + " in a pickle of " + std::to_string(bytes.size()) + " bytes");
        }
        at += l.size;
        break;
      case Arg::kLine:
        skip_line(start);
        break;
      case Arg::kTwoLines:
        skip_line(start);
        skip_line(start);
        break;
      case Arg::kLength: {
        if (left < static_cast<std::size_t>(l.size)) fail(start, "truncated length");
        std::uint64_t n = 0;
        for (int i = l.size - 1; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[at + i]);
        at += l.size;
        if (n > bytes.size() - at)
          fail(start, "a length of " + std::to_string(n) + " bytes where " + std::to_string(bytes.size() - at) + " remain");
        at += n;
        break;
      }
    }
  }
  fail(bytes.size(), "no STOP opcode (truncated)");
}

}  // namespace attn::io
