#include <filesystem>
#include <stdexcept>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/script.h>

#include "attn/io/prepared_data_reader.h"
#include "attn/io/tensors.h"

namespace attn::io {
namespace {

[[noreturn]] void bad(const std::string& source, const std::string& key, const std::string& what) {
  throw std::runtime_error(source + ": key '" + key + "': " + what);
}

std::vector<std::string> strings_at(const c10::impl::GenericDict& d, const std::string& key, const std::string& source) {
  if (!d.contains(key)) bad(source, key, "missing");
  const c10::IValue v = d.at(key);
  if (!v.isList()) bad(source, key, "expected a list of strings");
  std::vector<std::string> out;
  for (const c10::IValue& e : v.toListRef()) {
    if (!e.isString()) bad(source, key, "expected a list of strings");
    out.push_back(e.toStringRef());
  }
  return out;
}

at::Tensor tensor_at(const c10::impl::GenericDict& d, const std::string& key, at::ScalarType type, int64_t dims,
                     const std::string& source) {
  if (!d.contains(key)) bad(source, key, "missing");
  const c10::IValue v = d.at(key);
  if (!v.isTensor()) bad(source, key, "expected a tensor");
  require_in_storage(v.toTensor(), source, key);
  at::Tensor t = v.toTensor().contiguous();
  if (t.scalar_type() != type) bad(source, key, std::string("expected dtype ") + c10::toString(type));
  if (t.dim() != dims) bad(source, key, "expected " + std::to_string(dims) + " dimensions");
  return t;
}

}  // namespace

PreparedData read_prepared(const std::string& source) {
  if (!std::filesystem::exists(source)) throw std::runtime_error(source + ": no such file");
  check_archive(source);  // LibTorch's reader would trust the pickle's lengths and shapes
  c10::IValue v;
  try {
    caffe2::serialize::PyTorchStreamReader reader(source);
    v = torch::jit::readArchiveAndTensors("data", /*pickle_prefix=*/"", /*tensor_prefix=*/"", c10::nullopt, c10::nullopt, c10::nullopt,
                                          reader);
  } catch (const std::exception& e) {
    throw std::runtime_error(source + ": not a torch-saved file (" + std::string(e.what()).substr(0, 200) + ")");
  }
  if (!v.isGenericDict()) throw std::runtime_error(source + ": expected a dict saved by attn prepare");
  const c10::impl::GenericDict d = v.toGenericDict();
  if (!d.contains("format") || !d.at("format").isString() || d.at("format").toStringRef() != kPreparedFormat)
    bad(source, "format", std::string("expected '") + kPreparedFormat + "'");
  PreparedData out;
  const at::Tensor x = tensor_at(d, "x", torch::kInt32, 2, source);
  const at::Tensor lengths = tensor_at(d, "lengths", torch::kInt64, 1, source);
  out.x.rows = x.size(0);
  out.x.cols = x.size(1);
  if (lengths.size(0) != out.x.rows) bad(source, "lengths", "length differs from the rows of 'x'");
  out.x.ids.assign(x.data_ptr<std::int32_t>(), x.data_ptr<std::int32_t>() + x.numel());
  out.x.lengths.assign(lengths.data_ptr<std::int64_t>(), lengths.data_ptr<std::int64_t>() + lengths.numel());
  out.label_names = strings_at(d, "label_names", source);
  if (d.contains("padding")) {
    const c10::IValue p = d.at("padding");
    if (!p.isString() || (p.toStringRef() != "pre" && p.toStringRef() != "post")) bad(source, "padding", "expected 'pre' or 'post'");
    out.padding = text::parse_side(p.toStringRef(), "padding");
  }
  out.ids = strings_at(d, "ids", source);
  if (static_cast<std::int64_t>(out.ids.size()) != out.x.rows) bad(source, "ids", "length differs from the rows of 'x'");
  if (!out.label_names.empty()) {
    const at::Tensor labels = tensor_at(d, "labels", torch::kFloat32, 2, source);
    if (labels.size(0) != out.x.rows || labels.size(1) != static_cast<std::int64_t>(out.label_names.size()))
      bad(source, "labels", "shape differs from [rows, len(label_names)]");
    out.labels.assign(labels.data_ptr<float>(), labels.data_ptr<float>() + labels.numel());
  }
  return out;
}

}  // namespace attn::io
