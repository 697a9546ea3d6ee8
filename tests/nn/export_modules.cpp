// Writes every attention module as a TorchScript file, with sample inputs and the outputs the C++
// module gave, for tests/python/torchscript_parity.py to check from Python's torch.jit.load.
//
// usage: export_modules DIR
#include <filesystem>
#include <fstream>
#include <iostream>

#include <torch/script.h>
#include <torch/serialize.h>

#include "attn/nn/attention.h"
#include "attn/nn/transformer.h"

using namespace attn::nn;
using c10::IValue;

namespace {

std::filesystem::path dir;

bool ok = true;

bool equal(const IValue& a, const IValue& b) {
  if (a.isTensor()) return b.isTensor() && torch::equal(a.toTensor(), b.toTensor());
  const auto& x = a.toTupleRef().elements();
  const auto& y = b.toTupleRef().elements();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!equal(x[i], y[i])) return false;
  return true;
}

void write(const std::string& name, ScriptModule& m, const std::vector<IValue>& inputs) {
  m.eval();
  const IValue out = m.module().forward(inputs);
  const std::string path = (dir / (name + ".pt")).string();
  m.save(path);
  // C++ round trip: the file loads with torch::jit::load and gives the same outputs.
  torch::jit::Module loaded = torch::jit::load(path);
  if (!equal(loaded.forward(inputs), out)) {
    std::cerr << name << ": torch::jit::load'ed module gives different outputs\n";
    ok = false;
  }
  c10::impl::GenericDict io(c10::StringType::get(), c10::AnyType::get());
  io.insert("inputs", c10::ivalue::Tuple::create(inputs));
  io.insert("outputs", out.isTuple() ? out : c10::ivalue::Tuple::create({out}));
  const std::vector<char> bytes = torch::pickle_save(io);
  std::ofstream((dir / (name + "_io.pt")).string(), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

torch::Tensor lengths_mask(std::vector<std::int64_t> lengths, std::int64_t T) {
  return torch::arange(T).unsqueeze(0) < torch::tensor(lengths).unsqueeze(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: export_modules DIR\n";
    return 2;
  }
  dir = argv[1];
  std::filesystem::create_directories(dir);
  torch::manual_seed(42);
  const torch::Tensor h = torch::randn({2, 5, 6}), mask = lengths_mask({5, 2}, 5);

  WordAttention word(WordAttentionOptions(6));
  write("word_attention", word, {h, mask});
  WordAttention word_seq(WordAttentionOptions(6).combine(false));
  write("word_attention_sequence", word_seq, {h, IValue()});
  FeatureAttention feature(10);
  write("feature_attention", feature, {torch::randn({3, 10}), IValue()});
  for (const char* score : {"additive", "general", "dot", "scaled-dot", "cosine", "location"}) {
    QueryKeyAttention qk(QueryKeyAttentionOptions(6, 6).score(parse_score(score)).max_length(8));
    write(std::string("query_key_") + score, qk, {torch::randn({2, 3, 6}), h, mask});
  }
  LuongOutput luong(6, 4, 5);
  write("luong_output", luong, {torch::randn({2, 6}), torch::randn({2, 4})});
  ScaledDotProductAttention sdpa;
  write("scaled_dot_product", sdpa, {torch::randn({2, 3, 4}), torch::randn({2, 5, 4}), torch::randn({2, 5, 7}), mask.unsqueeze(1)});
  MultiHeadAttention mha(MultiHeadAttentionOptions(6, 3));
  write("multi_head", mha, {h, h, h, mask, true});
  TransformerEncoderLayer enc(TransformerLayerOptions(6, 2).dim_feedforward(12));
  write("encoder_layer", enc, {h, mask});
  TransformerEncoderLayer enc_pre(TransformerLayerOptions(6, 2).dim_feedforward(12).norm_first(true));
  write("encoder_layer_pre_norm", enc_pre, {h, mask});
  TransformerDecoderLayer dec(TransformerLayerOptions(6, 2).dim_feedforward(12));
  write("decoder_layer", dec, {torch::randn({2, 3, 6}), h, IValue(), mask});
  PositionalEncoding pe(6, 20);
  write("positional_encoding", pe, {h});
  if (!ok) return 1;
  std::cout << "wrote TorchScript modules and their inputs/outputs to " << dir.string() << " (each reloads in C++ with equal outputs)\n";
  return 0;
}
