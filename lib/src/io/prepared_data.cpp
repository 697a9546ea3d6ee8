#include "attn/io/prepared_data.h"

#include <stdexcept>

#include "attn/io/torch_save.h"

namespace attn::io {

void write_prepared(const std::string& path, const PreparedData& data, int threads, const XRows& x_rows) {
  const auto rows = data.x.rows;
  std::vector<std::pair<std::string, TorchSaveValue>> entries;
  entries.emplace_back("format", std::string(kPreparedFormat));
  TensorView x{TensorView::DType::kInt32, data.x.ids.data(), {rows, data.x.cols}};
  if (data.x.ids.size() != static_cast<std::size_t>(rows * data.x.cols)) {
    if (!x_rows) throw std::logic_error("write_prepared: x has only its shape and no x_rows to fill it");
    x.rows = [&](std::int64_t first, std::int64_t count, void* out) { x_rows(first, count, static_cast<std::int32_t*>(out)); };
  }
  entries.emplace_back("x", std::move(x));
  entries.emplace_back("lengths", TensorView{TensorView::DType::kInt64, data.x.lengths.data(), {rows}});
  if (!data.label_names.empty()) {
    const auto n_labels = static_cast<std::int64_t>(data.label_names.size());
    entries.emplace_back("labels", TensorView{TensorView::DType::kFloat32, data.labels.data(), {rows, n_labels}});
  }
  entries.emplace_back("label_names", data.label_names);
  entries.emplace_back("ids", data.ids);
  entries.emplace_back("padding", std::string(text::side_name(data.padding)));
  write_torch_dict(path, entries, threads);
}

}  // namespace attn::io
