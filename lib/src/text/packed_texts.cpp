// Texts stored back to back (see packed_texts.h).
#include "attn/text/packed_texts.h"

namespace attn::text {

void PackedTexts::push_back(std::string_view text) {
  bytes_ += text;
  ends_.push_back(bytes_.size());
}

void PackedTexts::reserve(std::size_t texts, std::size_t bytes) {
  ends_.reserve(texts);
  bytes_.reserve(bytes);
}

}  // namespace attn::text
