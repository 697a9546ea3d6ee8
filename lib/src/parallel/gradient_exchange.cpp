// The gradient exchange of data-parallel training (see gradient_exchange.h).
#include "attn/parallel/gradient_exchange.h"

#include <algorithm>

#include <torch/script.h>

namespace attn::parallel {

std::vector<std::int64_t> share_of(const std::vector<std::int64_t>& rows, int rank, int world) {
  std::vector<std::int64_t> out;
  for (auto i = static_cast<std::size_t>(rank); i < rows.size(); i += static_cast<std::size_t>(world)) out.push_back(rows[i]);
  return out;
}

GradientExchange::GradientExchange(Workers& workers, std::vector<torch::Tensor> trained, std::size_t word_table, bool sparse,
                                   WordIds word_ids)
    : workers_(workers),
      trained_(std::move(trained)),
      word_table_(word_table),
      sparse_(sparse),
      word_ids_(std::move(word_ids)),
      world_(workers.size()) {}

namespace {

/// A matrix with at least this many rows is a table (an embedding's): its gradient may go row-sparse.
constexpr std::int64_t kSparseMinRows = 1024;

}  // namespace

/// The rows of each matrix's gradient (an embedding table's) that some worker's share touched,
/// and whether some worker was asked to stop: one collective, the maximum over the workers of
/// each worker's 0/1 flags (a byte per row: the matrices' rows one after another, then the stop
/// flag). Rows no share touched have a zero gradient on every worker, so summing only the touched
/// rows gives the dense sum's bits; Adam then sees the same dense gradient (zeros elsewhere) and
/// decays every row's moments, as it does in one process.
std::vector<torch::Tensor> GradientExchange::touched_rows(const std::vector<torch::Tensor>& matrices, Step& t) {
  std::int64_t total = 0;
  for (const torch::Tensor& m : matrices) total += m.size(0);
  torch::Tensor flags = torch::zeros({total + 1}, torch::kUInt8);
  std::int64_t at = 0;
  for (const torch::Tensor& m : matrices) {
    if (m.grad().defined()) flags.narrow(0, at, m.size(0)).copy_(m.grad().ne(0).any(1));
    at += m.size(0);
  }
  flags[total] = t.stop ? 1 : 0;
  workers_.max(flags);
  t.bytes += static_cast<double>(flags.numel());
  t.stop = flags[total].item<std::uint8_t>() != 0;
  std::vector<torch::Tensor> rows;
  at = 0;
  for (const torch::Tensor& m : matrices) {
    rows.push_back(flags.narrow(0, at, m.size(0)).nonzero().view({-1}));
    at += m.size(0);
  }
  return rows;
}

GradientExchange::Step GradientExchange::exchange(const std::vector<std::int64_t>& batch_rows, bool stop) {
  Step t;
  t.stop = stop;
  for (torch::Tensor& p : trained_)
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);  // a worker whose share was empty
  std::vector<torch::Tensor> rows_of(trained_.size());                 // the rows to send of each parameter (undefined: all)
  const auto sparse_enough = [&](std::size_t i, const torch::Tensor& rows) {
    if (rows.numel() * 2 <= trained_[i].size(0)) rows_of[i] = rows;  // else the whole matrix: not half the bytes
  };
  // Matrices with many rows (embedding tables) may go row-sparse.
  std::vector<std::size_t> matrices;
  const bool by_ids = sparse_ && word_table_ < trained_.size();
  if (sparse_) {
    for (std::size_t i = 0; i < trained_.size(); ++i)
      if (trained_[i].dim() == 2 && trained_[i].size(0) >= kSparseMinRows && !(by_ids && i == word_table_)) matrices.push_back(i);
  }
  if (by_ids) {
    // Rows of ids in no share have a zero gradient everywhere: sending them or not, the same sum.
    const torch::Tensor all_rows = word_rows(batch_rows);
    if (matrices.empty() && gathered_word_rows(t, batch_rows, all_rows)) return t;
    sparse_enough(word_table_, all_rows);
  }
  bool stop_shared = false;
  if (!matrices.empty()) {
    std::vector<torch::Tensor> ms;
    for (std::size_t i : matrices) ms.push_back(trained_[i]);
    const std::vector<torch::Tensor> rows = touched_rows(ms, t);
    stop_shared = true;
    for (std::size_t k = 0; k < matrices.size(); ++k) sparse_enough(matrices[k], rows[k]);
  }
  sum_gradients(t, rows_of, stop_shared);
  return t;
}

bool GradientExchange::gathered_word_rows(Step& t, const std::vector<std::int64_t>& batch_rows, const torch::Tensor& all_rows) {
  std::vector<torch::Tensor> own;
  std::int64_t most = 0, others = 0;
  for (int r = 0; r < world_; ++r) {
    own.push_back(word_rows(share_of(batch_rows, r, world_)));
    most = std::max(most, own.back().size(0));
  }
  for (std::size_t i = 0; i < trained_.size(); ++i)
    if (i != word_table_) others += trained_[i].numel();
  // Bytes each worker receives: a gather brings world_ - 1 others' buffers; a ring allreduce
  // moves 2 (world - 1) / world_ of the buffer.
  const std::int64_t width = trained_[word_table_].size(1);
  const std::int64_t table_rows = trained_[word_table_].size(0);
  const std::int64_t summed = all_rows.size(0) * 2 <= table_rows ? all_rows.size(0) : table_rows;  // as exchange() sends
  if ((others + most * width) * world_ > 2 * (others + summed * width)) return false;
  gather_word_rows(t, own, most);
  return true;
}

void GradientExchange::sum_gradients(Step& t, const std::vector<torch::Tensor>& rows_of, bool stop_shared) {
  std::vector<torch::Tensor> grads;
  for (std::size_t i = 0; i < trained_.size(); ++i) {
    const torch::Tensor& g = trained_[i].grad();
    grads.push_back(rows_of[i].defined() ? g.index_select(0, rows_of[i]).reshape({-1}) : g.reshape({-1}));
  }
  if (!stop_shared) grads.push_back(torch::full({1}, t.stop ? 1.0F : 0.0F));  // the stop flag rides with the gradients
  torch::Tensor flat = torch::cat(grads);
  workers_.sum(flat);
  t.bytes += static_cast<double>(flat.numel() * 4);
  if (!stop_shared) t.stop = flat[-1].item<float>() > 0;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < trained_.size(); ++i) {
    torch::Tensor& p = trained_[i];
    const torch::Tensor summed = flat.narrow(0, offset, grads[i].numel());
    if (rows_of[i].defined()) {
      p.mutable_grad().index_copy_(0, rows_of[i], summed.view({rows_of[i].numel(), p.size(1)}));  // the others are zero everywhere
    } else {
      p.mutable_grad().copy_(summed.view_as(p));
    }
    offset += grads[i].numel();
  }
}

/// The rows of the word-vector table that the word ids of `batch` touch, ascending.
torch::Tensor GradientExchange::word_rows(const std::vector<std::int64_t>& batch) const {
  torch::Tensor seen = torch::zeros({trained_[word_table_].size(0)}, torch::kUInt8);
  if (!batch.empty()) seen.index_fill_(0, word_ids_(batch).reshape({-1}), 1);
  return seen.nonzero().view({-1});
}

/// The exchange of exchange() in one gather: each worker puts in every other gradient, the rows
/// its own share touched of the word-vector table (own[rank], padded with zeros to `most` rows)
/// and the stop flag; every worker then adds up everyone's in rank order, so all hold the same
/// sums (with two workers the very bits an allreduce gives: a + b is b + a).
void GradientExchange::gather_word_rows(Step& t, const std::vector<torch::Tensor>& own, std::int64_t most) {
  torch::Tensor& table = trained_[word_table_];
  const std::int64_t width = table.size(1);
  std::vector<torch::Tensor> parts;
  std::int64_t others = 0;
  for (std::size_t i = 0; i < trained_.size(); ++i) {
    if (i == word_table_) continue;
    parts.push_back(trained_[i].grad().reshape({-1}));
    others += parts.back().numel();
  }
  const torch::Tensor& mine = own[static_cast<std::size_t>(workers_.rank())];
  parts.push_back(table.grad().index_select(0, mine).reshape({-1}));
  parts.push_back(torch::zeros({(most - mine.size(0)) * width}));
  parts.push_back(torch::full({1}, t.stop ? 1.0F : 0.0F));
  const torch::Tensor flat = torch::cat(parts);
  const std::vector<torch::Tensor> all = workers_.gather(flat);
  t.bytes += static_cast<double>(flat.numel() * 4);
  torch::Tensor sums = all[0].narrow(0, 0, others).clone();
  t.stop = false;
  for (int r = 0; r < world_; ++r) {
    if (r > 0) sums.add_(all[static_cast<std::size_t>(r)].narrow(0, 0, others));
    t.stop = t.stop || all[static_cast<std::size_t>(r)][-1].item<float>() > 0;
  }
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < trained_.size(); ++i) {
    if (i == word_table_) continue;
    trained_[i].mutable_grad().copy_(sums.narrow(0, offset, trained_[i].numel()).view_as(trained_[i]));
    offset += trained_[i].numel();
  }
  torch::Tensor& g = table.mutable_grad();
  g.index_fill_(0, mine, 0);  // the other rows are zero on every worker
  for (int r = 0; r < world_; ++r) {
    const torch::Tensor& rows = own[static_cast<std::size_t>(r)];
    g.index_add_(0, rows, all[static_cast<std::size_t>(r)].narrow(0, others, rows.size(0) * width).view({rows.size(0), width}));
  }
}

}  // namespace attn::parallel
