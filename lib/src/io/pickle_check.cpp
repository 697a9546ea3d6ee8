#include "attn/io/pickle_check.h"

#include <cstdint>
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

Layout layout_of(unsigned char op) {
  switch (op) {
    // No argument.
    case '(':
    case '.':
    case '0':
    case '1':
    case '2':
    case 'N':
    case 'Q':
    case 'R':
    case 'a':
    case 'b':
    case 'd':
    case '}':
    case 'e':
    case 'l':
    case ']':
    case 'o':
    case 's':
    case 't':
    case ')':
    case 'u':
    case 0x81:
    case 0x85:
    case 0x86:
    case 0x87:
    case 0x88:
    case 0x89:
    case 0x8f:
    case 0x90:
    case 0x91:
    case 0x92:
    case 0x93:
    case 0x94:
    case 0x97:
    case 0x98:
      return {Arg::kNone, 0};
    // Fixed-size arguments.
    case 'K':
    case 'h':
    case 'q':
    case 0x80:
    case 0x82:
      return {Arg::kFixed, 1};
    case 'M':
    case 0x83:
      return {Arg::kFixed, 2};
    case 'J':
    case 'j':
    case 'r':
    case 0x84:
      return {Arg::kFixed, 4};
    case 'G':
    case 0x95:
      return {Arg::kFixed, 8};
    // Text lines.
    case 'I':
    case 'L':
    case 'F':
    case 'S':
    case 'V':
    case 'g':
    case 'p':
    case 'P':
      return {Arg::kLine, 0};
    case 'c':
    case 'i':
      return {Arg::kTwoLines, 0};
    // Length-prefixed data.
    case 'U':
    case 'C':
    case 0x8c:
    case 0x8a:
      return {Arg::kLength, 1};
    case 'T':
    case 'B':
    case 'X':
    case 0x8b:
      return {Arg::kLength, 4};
    case 0x8d:
    case 0x8e:
    case 0x96:
      return {Arg::kLength, 8};
    default:
      return {};
  }
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
