// tokenizer.json parsing on arbitrary bytes: a tokenizer or a clean error naming the key.
#include <string>

#include "attn/text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto t = attn::text::Tokenizer::from_json(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    t.texts_to_sequences({"the quick brown fox", "ünïcödé text"});
    t.to_json();
  } catch (const std::exception&) {
  }
  return 0;
}
