#include "attn/io/pickle_check.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

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

/// The element size of a storage type LibTorch pickles ("torch.FloatStorage"), 0 for an unknown one.
std::uint64_t storage_item_size(const std::string& global) {
  static const std::map<std::string, std::uint64_t> sizes = {
      {"Float", 4},  {"Double", 8}, {"Half", 2},     {"BFloat16", 2},     {"Long", 8},           {"Int", 4},         {"Short", 2},
      {"Char", 1},   {"Byte", 1},   {"Bool", 1},     {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"ComplexHalf", 4}, {"QInt8", 1},
      {"QUInt8", 1}, {"QInt32", 4}, {"QUInt4x2", 1}, {"QUInt2x4", 1},     {"Untyped", 1}};
  const std::string prefix = "torch.", suffix = "Storage";
  if (global.size() <= prefix.size() + suffix.size() || global.compare(0, prefix.size(), prefix) != 0 ||
      global.compare(global.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  const auto it = sizes.find(global.substr(prefix.size(), global.size() - prefix.size() - suffix.size()));
  return it == sizes.end() ? 0 : it->second;
}

/// What the check knows of a value on the unpickler's stack: only what a storage's persistent id
/// is made of (strings, integers, globals and short tuples of them); anything else is kOther.
struct Value {
  enum class Kind { kOther, kString, kInt, kGlobal, kTuple } kind = Kind::kOther;
  std::string text;          ///< a string; a global's "module.name"
  std::int64_t number = 0;   ///< an integer that fits 64 bits (a longer one is kOther)
  std::vector<Value> items;  ///< a tuple's, when it has at most 5 (a longer one is kOther)
};

Value string_value(std::string_view s) { return Value{Value::Kind::kString, std::string(s), 0, {}}; }
Value int_value(std::int64_t n) { return Value{Value::Kind::kInt, {}, n, {}}; }

/// The little-endian integer of `bytes` (at most 8), unsigned or two's complement.
std::int64_t little_endian(std::string_view bytes, bool is_signed) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  if (is_signed && !bytes.empty() && bytes.size() < 8 && (static_cast<unsigned char>(bytes.back()) & 0x80))
    v |= ~std::uint64_t{0} << (8 * bytes.size());
  return static_cast<std::int64_t>(v);
}

/// The unpickler's stack, as frames between MARKs, and its memo: enough of the machine to see
/// what each BINPERSID (a tensor's storage) is given.
class Stack {
 public:
  explicit Stack(std::function<void(const std::string&)> fail) : fail_(std::move(fail)) {}

  void push(Value v) { frames_.back().push_back(std::move(v)); }
  void push_other() { push(Value{}); }
  Value pop() {
    if (frames_.back().empty()) fail_("an opcode takes more values than the stack holds");
    Value v = std::move(frames_.back().back());
    frames_.back().pop_back();
    return v;
  }
  void pop(int n) {
    for (int i = 0; i < n; ++i) pop();
  }
  const Value& top() {
    if (frames_.back().empty()) fail_("an opcode takes more values than the stack holds");
    return frames_.back().back();
  }
  void mark() { frames_.emplace_back(); }
  bool at_mark() const { return frames_.back().empty() && frames_.size() > 1; }
  /// The values since the last MARK, which is removed.
  std::vector<Value> pop_mark() {
    if (frames_.size() < 2) fail_("an opcode takes the values since a MARK, and there is none");
    std::vector<Value> items = std::move(frames_.back());
    frames_.pop_back();
    return items;
  }
  void push_tuple(std::vector<Value> items) {
    Value t;
    if (items.size() <= 5) {
      t.kind = Value::Kind::kTuple;
      t.items = std::move(items);
    }
    push(std::move(t));
  }
  void put(std::uint64_t index) { memo_[index] = top(); }
  void memoize() { put(memo_.size()); }
  void get(std::uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) fail_("a memo index of " + std::to_string(index) + " that nothing was put at");
    push(it->second);
  }

 private:
  std::function<void(const std::string&)> fail_;
  std::vector<std::vector<Value>> frames_{1};
  std::map<std::uint64_t, Value> memo_;
};

/// The storage a BINPERSID is given: ('storage', torch.<Type>Storage, key, location, numel).
PickledStorage storage_of(const Value& id, const std::function<void(const std::string&)>& fail) {
  const std::string expected = "a persistent id that is not a tensor storage ('storage', torch.<Type>Storage, key, location, numel)";
  if (id.kind != Value::Kind::kTuple || id.items.size() != 5) fail(expected);
  const std::vector<Value>& f = id.items;
  if (f[0].kind != Value::Kind::kString || f[0].text != "storage" || f[1].kind != Value::Kind::kGlobal ||
      f[2].kind != Value::Kind::kString || f[3].kind != Value::Kind::kString || f[4].kind != Value::Kind::kInt)
    fail(expected);
  const std::uint64_t item = storage_item_size(f[1].text);
  if (item == 0) fail("an unknown storage type " + f[1].text);
  if (f[4].number < 0) fail("storage '" + f[2].text + "' has " + std::to_string(f[4].number) + " elements");
  const auto numel = static_cast<std::uint64_t>(f[4].number);
  if (numel > UINT64_MAX / item) fail("storage '" + f[2].text + "' has " + std::to_string(numel) + " elements");
  return PickledStorage{f[2].text, f[1].text.substr(6), numel, numel * item};
}

/// A decimal integer argument (INT, LONG, PUT, GET: text lines), if it is one that fits 64 bits.
std::optional<std::int64_t> decimal(std::string_view line) {
  std::string s(line);
  if (!s.empty() && s.back() == 'L') s.pop_back();  // LONG's suffix
  if (s == "00" || s == "01") return s == "01";     // INT's False and True
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return v;
}

/// A memo index (PUT, GET): a decimal line.
std::uint64_t memo_index(std::string_view line, const std::function<void(const std::string&)>& fail) {
  const std::optional<std::int64_t> index = decimal(line);
  if (!index || *index < 0) fail("'" + std::string(line.substr(0, 40)) + "' is not a memo index");
  return static_cast<std::uint64_t>(*index);
}

using Fail = std::function<void(const std::string&)>;

/// The value an opcode that only pushes one pushes (a string, an integer, a global, None, a float,
/// an empty container, bytes), from its argument (`second`: GLOBAL's name line); nullopt for
/// another opcode.
std::optional<Value> literal(unsigned char op, std::string_view arg, std::string_view second) {
  switch (op) {
    case 'X':
    case 0x8c:
    case 0x8d:
    case 'T':
    case 'U':
    case 'V':  // (BIN)UNICODE, (SHORT_)BINSTRING
      return string_value(arg);
    case 'S':  // STRING: a quoted repr
      return string_value(arg.size() >= 2 ? arg.substr(1, arg.size() - 2) : arg);
    case 'K':
    case 'M':  // BININT1, BININT2
      return int_value(little_endian(arg, false));
    case 'J':  // BININT
      return int_value(little_endian(arg, true));
    case 0x8a:
    case 0x8b:  // LONG1, LONG4
      return arg.size() <= 8 ? int_value(little_endian(arg, true)) : Value{};
    case 'I':
    case 'L': {  // INT, LONG
      const std::optional<std::int64_t> n = decimal(arg);
      return n ? int_value(*n) : Value{};
    }
    case 'c':  // GLOBAL
      return Value{Value::Kind::kGlobal, std::string(arg) + "." + std::string(second), 0, {}};
    case ')':  // EMPTY_TUPLE
      return Value{Value::Kind::kTuple, {}, 0, {}};
    case 'N':
    case 0x88:
    case 0x89:
    case 'G':
    case 'F':
    case '}':
    case ']':
    case 0x8f:  // None, bools, floats, empty containers
    case 'B':
    case 'C':
    case 0x8e:
    case 0x96:
    case 0x97:
    case 0x82:
    case 0x83:
    case 0x84:  // bytes, buffers, extensions
      return Value{};
    default:
      return std::nullopt;
  }
}

/// Applies opcode `op` (with its argument) to `stack`, other than a literal's push; a BINPERSID's
/// storage goes to `storages`. False for STOP.
bool apply(unsigned char op, std::string_view arg, std::size_t pickle_size, Stack& stack, std::vector<PickledStorage>& storages,
           const Fail& fail) {
  // LibTorch grows its memo table to the index a PUT names, so it is bounded by the pickle's size.
  const auto put = [&](std::uint64_t index) {
    if (index >= pickle_size)
      fail("a memo index of " + std::to_string(index) + " in a pickle of " + std::to_string(pickle_size) + " bytes");
    stack.put(index);
  };
  switch (op) {
    case '.':  // STOP
      return false;
    case 0x80:
    case 0x95:
    case 0x98:  // PROTO, FRAME, READONLY_BUFFER
      break;
    case '(':  // MARK
      stack.mark();
      break;
    case 0x93: {  // STACK_GLOBAL
      const Value name = stack.pop(), module = stack.pop();
      if (name.kind == Value::Kind::kString && module.kind == Value::Kind::kString)
        stack.push(Value{Value::Kind::kGlobal, module.text + "." + name.text, 0, {}});
      else
        stack.push_other();
      break;
    }
    case 't':  // TUPLE
      stack.push_tuple(stack.pop_mark());
      break;
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
      std::vector<Value> items(static_cast<std::size_t>(op - 0x84));
      for (std::size_t i = items.size(); i-- > 0;) items[i] = stack.pop();
      stack.push_tuple(std::move(items));
      break;
    }
    case 'l':
    case 'd':
    case 0x91:
    case 'o':
    case 'i':  // LIST, DICT, FROZENSET, OBJ, INST
      stack.pop_mark();
      stack.push_other();
      break;
    case 'e':
    case 'u':
    case 0x90:  // APPENDS, SETITEMS, ADDITEMS: into the container below the MARK
      stack.pop_mark();
      stack.top();
      break;
    case '1':  // POP_MARK
      stack.pop_mark();
      break;
    case '0':  // POP (of a MARK, when the stack above it is empty)
      if (stack.at_mark())
        stack.pop_mark();
      else
        stack.pop();
      break;
    case '2': {  // DUP
      Value copy = stack.top();
      stack.push(std::move(copy));
      break;
    }
    case 'a':
    case 'b':  // APPEND, BUILD: one value into the object below
      stack.pop();
      stack.top();
      break;
    case 's':  // SETITEM
      stack.pop(2);
      stack.top();
      break;
    case 'R':
    case 0x81:
    case 0x92:  // REDUCE, NEWOBJ (2 values), NEWOBJ_EX (3)
      stack.pop(op == 0x92 ? 3 : 2);
      stack.push_other();
      break;
    case 'q':
    case 'r':  // BINPUT, LONG_BINPUT
      put(static_cast<std::uint64_t>(little_endian(arg, false)));
      break;
    case 'p':  // PUT
      put(memo_index(arg, fail));
      break;
    case 0x94:  // MEMOIZE
      stack.memoize();
      break;
    case 'h':
    case 'j':  // BINGET, LONG_BINGET
      stack.get(static_cast<std::uint64_t>(little_endian(arg, false)));
      break;
    case 'g':  // GET
      stack.get(memo_index(arg, fail));
      break;
    case 'Q':  // BINPERSID: a tensor's storage, whose bytes are a record of the archive
      storages.push_back(storage_of(stack.pop(), fail));
      stack.push_other();
      break;
    case 'P':  // PERSID: a text persistent id, which LibTorch does not read
      fail("a text persistent id (PERSID), which LibTorch does not read");
      break;
    default:
      fail("opcode " + std::to_string(op) + " is not handled");
  }
  return true;
}

}  // namespace

std::vector<PickledStorage> check_pickle(std::string_view bytes, const std::string& what) {
  std::size_t at = 0, start = 0;
  const Fail fail = [&](const std::string& why) {
    throw std::runtime_error(what + ": corrupt pickle at byte " + std::to_string(start) + ": " + why);
  };
  const auto line = [&]() {
    const std::size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) fail("a line without its newline");
    const std::string_view text = bytes.substr(at, end - at);
    at = end + 1;
    return text;
  };
  // Takes `n` bytes of argument.
  const auto take = [&](std::uint64_t n, const char* why) {
    if (n > bytes.size() - at) fail(why);
    const std::string_view taken = bytes.substr(at, static_cast<std::size_t>(n));
    at += static_cast<std::size_t>(n);
    return taken;
  };
  Stack stack(fail);
  std::vector<PickledStorage> storages;
  while (at < bytes.size()) {
    start = at;
    const auto op = static_cast<unsigned char>(bytes[at++]);
    const Layout l = layout_of(op);
    // The opcode's argument: fixed bytes, a line (two for GLOBAL and INST), or the bytes a length prefix counts.
    std::string_view arg, second;
    if (l.arg == Arg::kBadOpcode) fail("unknown opcode " + std::to_string(op));
    if (l.arg == Arg::kFixed) arg = take(static_cast<std::uint64_t>(l.size), "truncated argument");
    if (l.arg == Arg::kLine || l.arg == Arg::kTwoLines) arg = line();
    if (l.arg == Arg::kTwoLines) second = line();
    if (l.arg == Arg::kLength) {
      const auto n = static_cast<std::uint64_t>(little_endian(take(static_cast<std::uint64_t>(l.size), "truncated length"), false));
      if (n > bytes.size() - at) fail("a length of " + std::to_string(n) + " bytes where " + std::to_string(bytes.size() - at) + " remain");
      arg = take(n, "");
    }
    if (std::optional<Value> v = literal(op, arg, second))
      stack.push(std::move(*v));
    else if (!apply(op, arg, bytes.size(), stack, storages, fail))
      return storages;
  }
  start = bytes.size();
  fail("no STOP opcode (truncated)");
  return storages;  // (not reached)
}

}  // namespace attn::io
