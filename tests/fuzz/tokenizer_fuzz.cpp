// The Keras tokenizer on arbitrary bytes (texts split at newlines): fitting and applying, word-level
// and char-level, with an OOV token and a num_words cut, and reading through the deobfuscating
// normaliser with and without the fitted vocabulary (whose output must be UTF-8 when its input
// is); its to_json must read back the same.
#include <stdexcept>
#include <string>
#include <vector>

#include "attn/text/deobfuscate.h"
#include "attn/text/padding.h"
#include "attn/text/tokenizer.h"
#include "attn/text/unicode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn::text;
  std::vector<std::string> texts(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n')
      texts.emplace_back();
    else
      texts.back() += static_cast<char>(data[i]);
  }
  for (int variant = 0; variant < 4; ++variant) {
    TokenizerOptions o;
    o.num_words = variant == 1 ? 5 : 0;
    if (variant == 1) o.oov_token = "<OOV>";
    o.char_level = variant == 2;
    o.deobfuscate = variant == 3;
    Tokenizer t(o);
    t.fit_on_texts(texts, variant + 1);
    const std::vector<Sequence> seqs = t.texts_to_sequences(texts, 2);
    PadOptions pad;
    pad.maxlen = 4;
    pad_sequences(seqs, pad);
    const std::string json = t.to_json();
    bool valid = true;  // every text attn tokenizes has passed a UTF-8 check first
    for (const auto& text : texts) valid = valid && find_invalid_utf8(text) == std::string::npos;
    if (!valid) continue;
    Tokenizer back = Tokenizer::from_json(json, "fuzz");
    back.read_deobfuscated(o.deobfuscate);  // (not Keras' setting: the model's config keeps it)
    for (const auto& text : texts) {
      if (variant != 3) continue;
      if (find_invalid_utf8(deobfuscate(text)) != std::string::npos)
        throw std::logic_error("deobfuscate made invalid UTF-8 of valid UTF-8");
      for (const std::string& token : t.tokenize(text))  // read with the fitted vocabulary's steps
        if (find_invalid_utf8(token) != std::string::npos)
          throw std::logic_error("deobfuscate with a vocabulary made invalid UTF-8 of valid UTF-8");
    }
    if (back.texts_to_sequences(texts) != seqs) throw std::logic_error("to_json / from_json changed the tokenizer");
  }
  return 0;
}
