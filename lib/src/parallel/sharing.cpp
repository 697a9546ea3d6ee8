// Workers sharing the scoring of rows (see sharing.h).
#include "attn/parallel/sharing.h"

#include <algorithm>
#include <stdexcept>

#include <torch/script.h>

#include "attn/parallel/workers.h"

namespace attn::parallel {

int WorkerSharing::rank() const { return workers_.rank(); }
int WorkerSharing::size() const { return workers_.size(); }
void WorkerSharing::new_jobs() const { ++scoring_; }
std::int64_t WorkerSharing::next_job() const { return workers_.take_number("jobs/" + std::to_string(scoring_)); }

std::vector<float> WorkerSharing::gather(const std::vector<float>& mine) const {
  torch::Tensor lengths = torch::zeros({size()}, torch::kInt64);
  lengths[rank()] = static_cast<std::int64_t>(mine.size());
  workers_.sum(lengths);
  const std::int64_t offset = lengths.narrow(0, 0, rank()).sum().item<std::int64_t>();
  torch::Tensor all = torch::zeros({lengths.sum().item<std::int64_t>()}, torch::kFloat32);
  if (!mine.empty()) all.narrow(0, offset, static_cast<std::int64_t>(mine.size())).copy_(torch::tensor(mine, torch::kFloat32));
  workers_.sum(all);
  return std::vector<float>(all.data_ptr<float>(), all.data_ptr<float>() + all.numel());
}

std::vector<std::string> WorkerSharing::gather_bytes(const std::string& mine) const {
  torch::Tensor lengths = torch::zeros({size()}, torch::kInt64);
  lengths[rank()] = static_cast<std::int64_t>(mine.size());
  workers_.sum(lengths);
  // Workers::gather sends tensors of one size: each worker's bytes, zero-padded to the longest.
  const std::int64_t longest = lengths.max().item<std::int64_t>();
  torch::Tensor bytes = torch::zeros({std::max<std::int64_t>(longest, 1)}, torch::kUInt8);
  std::copy(mine.begin(), mine.end(), reinterpret_cast<char*>(bytes.data_ptr<std::uint8_t>()));
  const std::vector<torch::Tensor> all = workers_.gather(bytes);
  std::vector<std::string> out;
  for (int k = 0; k < size(); ++k)
    out.emplace_back(reinterpret_cast<const char*>(all[static_cast<std::size_t>(k)].data_ptr<std::uint8_t>()),
                     static_cast<std::size_t>(lengths[k].item<std::int64_t>()));
  return out;
}

SharedScoring::SharedScoring(const std::vector<std::int64_t>& rows, std::vector<std::vector<std::size_t>> batches,
                             const RowSharing* sharing)
    : rows_(rows), sharing_(sharing && sharing->size() > 1 ? sharing : nullptr), batches_(std::move(batches)) {}

std::vector<float> SharedScoring::scores(const std::function<std::vector<float>(const std::vector<std::int64_t>&)>& score) {
  if (!sharing_) return score(rows_);
  // This worker's batches, longest first, as it takes them: [how many, floats per row, the batches' numbers, their outputs].
  std::vector<float> mine{0, 0};
  std::vector<float> outputs;
  sharing_->new_jobs();
  for (std::int64_t job = sharing_->next_job(); job < static_cast<std::int64_t>(batches_.size()); job = sharing_->next_job()) {
    const std::size_t b = batches_.size() - 1 - static_cast<std::size_t>(job);
    std::vector<std::int64_t> some;
    for (std::size_t p : batches_[b]) some.push_back(rows_[p]);
    const std::vector<float> got = score(some);
    if (got.size() % some.size() != 0)
      throw std::logic_error("a score of " + std::to_string(got.size()) + " floats for a batch of " + std::to_string(some.size()) +
                             " rows");
    mine[0] += 1, mine[1] = static_cast<float>(got.size() / some.size());
    mine.push_back(static_cast<float>(b));
    outputs.insert(outputs.end(), got.begin(), got.end());
  }
  mine.insert(mine.end(), outputs.begin(), outputs.end());
  const std::vector<float> all = sharing_->gather(mine);
  // Worker by worker: its batches' numbers, then their outputs, put back in the order of `rows`.
  const auto broken = [&] { return std::runtime_error("the workers' scores of " + std::to_string(rows_.size()) + " rows do not add up"); };
  std::vector<float> out;
  std::size_t per = 0, at = 0, scored = 0;
  taken_.assign(static_cast<std::size_t>(sharing_->size()), {});
  for (auto& taken : taken_) {
    if (at + 2 > all.size()) throw broken();
    const auto n = static_cast<std::size_t>(all[at]), worker_per = static_cast<std::size_t>(all[at + 1]);
    at += 2;
    if (n > 0 && per == 0) per = worker_per, out.assign(rows_.size() * per, 0.0f);
    if ((n > 0 && worker_per != per) || at + n > all.size()) throw broken();
    for (std::size_t i = 0; i < n; ++i) taken.push_back(static_cast<std::size_t>(all[at + i]));
    at += n;
    for (std::size_t b : taken) {
      if (b >= batches_.size() || at + batches_[b].size() * per > all.size()) throw broken();
      for (std::size_t p : batches_[b]) {
        std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(at), per, out.begin() + static_cast<std::ptrdiff_t>(p * per));
        at += per;
      }
      scored += batches_[b].size();
    }
  }
  if (scored != rows_.size() || at != all.size()) throw broken();
  return out;
}

std::vector<std::string> SharedScoring::texts(const std::vector<std::string>& mine) const {
  if (!sharing_) return mine;
  std::vector<float> packed;  // each text as its length, then its bytes (0-255: exact as floats)
  for (const std::string& t : mine) {
    packed.push_back(static_cast<float>(t.size()));
    for (unsigned char c : t) packed.push_back(static_cast<float>(c));
  }
  const std::vector<float> all = sharing_->gather(packed);
  const auto broken = [&] { return std::runtime_error("the workers' texts of " + std::to_string(rows_.size()) + " rows do not add up"); };
  std::vector<std::string> out(rows_.size());
  std::size_t at = 0;
  for (const auto& taken : taken_)
    for (std::size_t b : taken)
      for (std::size_t p : batches_[b]) {
        if (at >= all.size()) throw broken();
        const auto n = static_cast<std::size_t>(all[at++]);
        if (at + n > all.size()) throw broken();
        for (std::size_t i = 0; i < n; ++i) out[p] += static_cast<char>(static_cast<unsigned char>(all[at + i]));
        at += n;
      }
  if (at != all.size()) throw broken();
  return out;
}

std::string run_by_workers(const std::function<std::string(const RowSharing*)>& run, std::chrono::seconds worker_timeout) {
  const WorkerPlace place = worker_place_from_environment();  // torchrun's, or one worker
  if (place.world_size == 1) return run(nullptr);
  const auto workers = Workers::connect(place, worker_timeout);
  const WorkerSharing sharing(*workers);
  return run(&sharing);
}

}  // namespace attn::parallel
