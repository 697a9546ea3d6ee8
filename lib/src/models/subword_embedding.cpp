// The text classifiers' token lookup (see subword_embedding.h).
#include "subword_embedding.h"

#include <torch/script.h>

#include "attn/nn/fused_embedding.h"
#include "attn/nn/script_module.h"
#include "attn/text/subwords.h"
#include "model_support.h"

namespace attn::models {
namespace {

const char* kWordsSource = R"(
def token_mask(self, ids: Tensor) -> Tensor:
    # ids [B, T] (0 = padding) -> [B, T] the real tokens
    return ids != 0

def lookup(self, ids: Tensor) -> Tensor:
    # ids [B, T] -> the words' vectors [B, T, D]
    return torch.embedding(self.embedding, ids)
)";

// Bojanowski et al. (2017): a word's vector is the mean of its own row and the rows of its
// character n-grams; a word without a row of its own (beyond num_words, or never seen) is the mean
// of its n-grams'.
const char* kSubwordsSource = R"(
def token_mask(self, ids: Tensor) -> Tensor:
    # ids [B, T] (0 = padding) or [B, T, 1 + G] (all 0 = padding) -> [B, T] the real tokens
    if ids.dim() == 3:
        return (ids != 0).sum(2) != 0
    return ids != 0

def lookup(self, ids: Tensor) -> Tensor:
    # ids [B, T] word rows, or [B, T, 1 + G]: a word row (0 = none), then n-gram rows (0 = none)
    # -> the tokens' vectors [B, T, D]
    if ids.dim() == 2:
        return torch.embedding(self.embedding, ids)
    words = ids.select(2, 0)
    grams = ids.narrow(2, 1, ids.size(2) - 1)
    own = (words != 0).to(self.embedding.dtype).unsqueeze(2)                 # [B, T, 1]
    count = own + (grams != 0).sum(2, keepdim=True).to(self.embedding.dtype)  # rows averaged
    x = torch.embedding(self.embedding, words) * own
    if grams.size(2) > 0:
        flat = grams.reshape([-1])
        present = (flat != 0).to(self.embedding.dtype)                       # row 0 (no n-gram) weighs 0
        offsets = torch.arange(0, flat.numel(), grams.size(2), dtype=flat.dtype, device=flat.device)
        summed, _, _, _ = torch.embedding_bag(self.subword_embedding, flat, offsets, False, 0, False, present, False)
        x = x + summed.view([ids.size(0), ids.size(1), self.subword_embedding.size(1)])
    return x / count.clamp_min(1.0)

def subword_rows(self, word: str) -> List[int]:
    # the word's n-gram rows; with subword_skeletons, then its consonant skeleton's (when not the word)
    rows = self.ngram_rows(word)
    if self.subword_skeletons:
        skeleton = self.consonant_skeleton(word)
        if skeleton != word:
            rows.extend(self.ngram_rows(skeleton))
    return rows

def consonant_skeleton(self, word: str) -> str:
    # the word with its ASCII vowels (a e i o u, either case) after the first byte dropped
    out = word[0:1]
    for i in range(1, len(word)):
        if ord(word[i]) not in [97, 101, 105, 111, 117, 65, 69, 73, 79, 85]:
            out = out + word[i]
    return out

def ngram_rows(self, word: str) -> List[int]:
    # fastText's n-grams of "<word>" (n = subword_min_n..subword_max_n characters; TorchScript's
    # strings are UTF-8 bytes, a character's continuation bytes 0b10xxxxxx stay with it), each
    # hashed by FNV-1a over its bytes sign-extended -> 1 + hash % subword_buckets
    marked = "<" + word + ">"
    size = len(marked)
    rows: List[int] = []
    for start in range(size):
        if (ord(marked[start]) & 192) == 128:
            continue
        end = start
        n = 1
        while n <= self.subword_max_n and end < size:
            end += 1
            while end < size and (ord(marked[end]) & 192) == 128:
                end += 1
            if n >= self.subword_min_n:
                h = 2166136261
                for i in range(start, end):
                    b = ord(marked[i])
                    if b >= 128:
                        b = b | 4294967040
                    h = ((h ^ b) * 16777619) & 4294967295
                rows.append(1 + h % self.subword_buckets)
            n += 1
    return rows

def subword_ids(self, words: List[str], word_rows: List[int]) -> Tensor:
    # one text's tokens (Keras' text_to_word_sequence) and each one's word row (its word_index when
    # below num_words, else 0) -> [1, T, 1 + G], what forward reads
    grams: List[List[int]] = []
    most = 0
    for w in words:
        g = self.subword_rows(w)
        grams.append(g)
        most = max(most, len(g))
    flat: List[int] = []
    for t in range(len(words)):
        flat.append(word_rows[t])
        flat.extend(grams[t])
        flat.extend([0] * (most - len(grams[t])))
    return torch.tensor(flat).view([1, len(words), 1 + most])
)";

// x = Embedding(ids), then SpatialDropout1D and the LSTM's input dropout while training: two
// independent masks, one per sequence and channel [B, 1, C] shared by every step, applied as their
// product in one pass over x.
const char* kEmbedSource = R"(
def channel_mask(self, x: Tensor, p: float) -> Tensor:
    # a dropout mask per sequence and channel [B, 1, C] (Keras' SpatialDropout1D and LSTM dropout)
    return torch.dropout(torch.ones_like(x[:, :1, :]), p, True)

def embed(self, ids: Tensor) -> Tensor:
    x = self.lookup(ids)                                         # [B, T, embed_dim]
    if self.training and (self.spatial_dropout > 0.0 or self.lstm_dropout > 0.0):
        x = x * (self.channel_mask(x, self.spatial_dropout) * self.channel_mask(x, self.lstm_dropout))
    return x
)";

// The same on attn's kernel (fused_embedding.h: the lookup and the masks in one pass), with the
// same masks (the same random draws): native builds only (nn::Runtime).
const char* kEmbedNativeSource = R"(
def embed(self, ids: Tensor) -> Tensor:
    if self.training and (self.spatial_dropout > 0.0 or self.lstm_dropout > 0.0):
        ones = torch.ones([ids.size(0), 1, self.embedding.size(1)], dtype=self.embedding.dtype, device=ids.device)
        keep = torch.dropout(ones, self.spatial_dropout, True) * torch.dropout(ones, self.lstm_dropout, True)
        return attn.embedding_scaled(self.embedding, ids, keep)
    return self.lookup(ids)
)";

// With subwords, ids [B, T, 1 + G] take the kernel's mean of a word's rows (models/subword_embedding.h).
const char* kEmbedNativeSubwordsSource = R"(
def embed(self, ids: Tensor) -> Tensor:
    if self.training and (self.spatial_dropout > 0.0 or self.lstm_dropout > 0.0):
        ones = torch.ones([ids.size(0), 1, self.embedding.size(1)], dtype=self.embedding.dtype, device=ids.device)
        keep = torch.dropout(ones, self.spatial_dropout, True) * torch.dropout(ones, self.lstm_dropout, True)
        if ids.dim() == 3:
            return attn.subword_embedding_scaled(self.embedding, self.subword_embedding, ids, keep)
        return attn.embedding_scaled(self.embedding, ids, keep)
    return self.lookup(ids)
)";

}  // namespace

ConfigKey subwords_key() {
  return {"subword_buckets", 0, "character n-gram rows (fastText's subwords, n = 3..6), 0 for words only; set from the data (--subwords)",
          true};
}

ConfigKey skeletons_key() {
  return {"subword_skeletons", false,
          "with subwords, a word's rows include its consonant skeleton's n-grams (stupid: stpd); set from the data (--skeletons)", true};
}

void fit_subwords(nlohmann::json& config, const nlohmann::json& given, const DataSizes& data) {
  fit_exact(config, given, "subword_buckets", data.subword_buckets);
  if (!given.contains("subword_skeletons"))
    config["subword_skeletons"] = data.subword_skeletons;
  else if (config.at("subword_skeletons") != data.subword_skeletons)
    throw std::invalid_argument("config key 'subword_skeletons' must be the data's " +
                                std::string(data.subword_skeletons ? "true" : "false") + ", got " + config.at("subword_skeletons").dump());
}

std::vector<LayerRow> with_subword_row(std::vector<LayerRow> rows, const nlohmann::json& config, const std::string& width) {
  if (config.value("subword_buckets", std::int64_t{0}) == 0) return rows;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].name == "embedding") {
      rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(i + 1),
                  {"subword_embedding", "character n-grams (mean with the word)", "(None, T, " + width + ")", "subword_embedding"});
      break;
    }
  return rows;
}

void define_lookup(torch::jit::Module& m, const nlohmann::json& config, const std::function<torch::Tensor(std::int64_t rows)>& init,
                   const std::string& what) {
  const std::int64_t buckets = config.value("subword_buckets", std::int64_t{0});
  nn::require_config(buckets >= 0 && buckets <= (std::int64_t{1} << 30), what + ": subword_buckets must be in 0..2^30");
  if (buckets == 0) {
    nn::script::define(m, kWordsSource, what);
    return;
  }
  {
    torch::NoGradGuard no_grad;
    nn::script::add_parameter(m, kSubwordEmbedding, init(buckets + 1));
  }
  m.register_attribute("subword_buckets", c10::IntType::get(), buckets);
  m.register_attribute("subword_min_n", c10::IntType::get(), text::kSubwordMinN);
  m.register_attribute("subword_max_n", c10::IntType::get(), text::kSubwordMaxN);
  m.register_attribute("subword_skeletons", c10::BoolType::get(), config.value("subword_skeletons", false));
  nn::script::define(m, kSubwordsSource, what);
}

void define_dropped_embed(torch::jit::Module& m, const nlohmann::json& config, nn::Runtime runtime, const std::string& what) {
  if (runtime == nn::Runtime::kNative) {
    nn::register_fused_embedding();
    nn::script::define(m, config.value("subword_buckets", std::int64_t{0}) > 0 ? kEmbedNativeSubwordsSource : kEmbedNativeSource,
                       what + " (native)");
  } else {
    nn::script::define(m, kEmbedSource, what);
  }
}

}  // namespace attn::models
