#include "attn/io/code_check.h"

#include <array>
#include <stdexcept>

namespace attn::io {
namespace {

constexpr std::array<std::string_view, 5> kUntypedMetadata = {"__parameters__", "__buffers__", "__annotations__", "__forward_hooks__",
                                                              "__forward_pre_hooks__"};

bool identifier_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

void check_torchscript_code(std::string_view code, const std::string& what) {
  bool in_class = false;
  std::size_t body_indent = 0;  // the class body's indentation, once its first statement is seen
  int depth = 0;                // open brackets: a line inside them continues a statement
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < code.size();) {
    std::size_t end = code.find('\n', start);
    if (end == std::string_view::npos) end = code.size();
    std::string_view line = code.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const bool continued = depth > 0;
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {  // the brackets this line leaves open (strings and comments skipped)
      const char c = line[i];
      if (quote) {
        if (c == '\\')
          ++i;
        else if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '#') {
        break;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
    if (continued) continue;
    std::size_t indent = 0;
    while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
    const std::string_view statement = line.substr(indent);
    if (statement.empty() || statement[0] == '#' || statement[0] == '\r') continue;
    if (indent == 0) {
      in_class = statement.substr(0, 6) == "class ";
      body_indent = 0;
      continue;
    }
    if (!in_class) continue;
    if (body_indent == 0) body_indent = indent;
    if (indent != body_indent) continue;  // inside a method
    std::size_t n = 0;
    while (n < statement.size() && identifier_char(statement[n])) ++n;
    std::size_t k = n;
    while (k < statement.size() && (statement[k] == ' ' || statement[k] == '\t')) ++k;
    const bool untyped_assignment =
        n > 0 && k < statement.size() && statement[k] == '=' && (k + 1 == statement.size() || statement[k + 1] != '=');
    if (!untyped_assignment) continue;
    const std::string_view name = statement.substr(0, n);
    bool metadata = false;
    for (const std::string_view m : kUntypedMetadata) metadata = metadata || name == m;
    if (!metadata)
      throw std::runtime_error(what + " line " + std::to_string(line_number) + ": class attribute '" + std::string(name) +
                               "' has no type: the file is corrupt");
  }
}

}  // namespace attn::io
