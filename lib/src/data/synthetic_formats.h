#pragma once
// The date generator's formats by name (synthetic.cpp): for its tests, which check each is used.
#include <string>
#include <vector>

namespace attn::data {

/// ICU's four styles ("short" ... "full"), then the hand-written patterns.
const std::vector<std::string>& date_format_names();

}  // namespace attn::data
