#pragma once
/// Workers sharing the scoring of rows: the interface (RowSharing: no LibTorch in this header, the
/// commands' requests carry one), its c10d implementation, and the scoring itself.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::parallel {

class Workers;  // workers.h

/// Data-parallel workers sharing the scoring of rows (validation, a sharded `attn evaluate`): the
/// rows' scoring batches are handed out whole, one at a time to whichever worker asks first, and
/// the outputs gathered, so every worker ends with the bits one process computes (WorkerSharing
/// implements it over c10d).
class RowSharing {
 public:
  virtual ~RowSharing() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Every worker's `mine`, concatenated in rank order (the workers' lengths may differ).
  virtual std::vector<float> gather(const std::vector<float>& mine) const = 0;
  /// Every worker's bytes, in rank order (their lengths may differ): what workers hand each other
  /// that is not floats (attn aggregate's word totals).
  virtual std::vector<std::string> gather_bytes(const std::string& mine) const = 0;
  /// Starts handing out a new scoring's jobs: every worker calls it once per scoring, before that
  /// scoring's first next_job().
  virtual void new_jobs() const = 0;
  /// A job of the current scoring no worker has been given yet: 0, 1, 2, ... over all the workers.
  virtual std::int64_t next_job() const = 0;
};

/// The workers sharing the scoring of rows (validation, a sharded `attn evaluate`): each worker's
/// outputs are gathered with sums (each fills its own segment of a zero vector; adding zeros changes
/// no bit); the jobs are numbered by a counter in the workers' store, one per scoring.
class WorkerSharing : public RowSharing {
 public:
  explicit WorkerSharing(Workers& workers) : workers_(workers) {}
  int rank() const override;
  int size() const override;
  std::vector<float> gather(const std::vector<float>& mine) const override;
  std::vector<std::string> gather_bytes(const std::string& mine) const override;
  void new_jobs() const override;
  std::int64_t next_job() const override;

 private:
  Workers& workers_;
  mutable std::int64_t scoring_ = -1;  // the scorings so far, alike on every worker
};

/// Rows scored by workers sharing them (or by this process alone when `sharing` is null or of one
/// worker): their scoring batches (`batches`: positions in `rows`, ordered shortest first), handed
/// out longest first to whichever worker is free, each scored alone, so every row's outputs are
/// the bits one process computes, as long as `score` scores such batches as one process would.
class SharedScoring {
 public:
  SharedScoring(const std::vector<std::int64_t>& rows, std::vector<std::vector<std::size_t>> batches, const RowSharing* sharing);
  /// `score(rows)`: a fixed number of floats per row, every row's, in the order of `rows`. This
  /// worker calls `score` on each batch it takes, in the order it takes them.
  std::vector<float> scores(const std::function<std::vector<float>(const std::vector<std::int64_t>&)>& score);
  /// After scores(): texts made for the rows this worker scored (`mine`, in the order its `score`
  /// calls got them), every row's, in the order of `rows` (a seq2seq model's outputs).
  std::vector<std::string> texts(const std::vector<std::string>& mine) const;

 private:
  const std::vector<std::int64_t>& rows_;
  const RowSharing* sharing_;
  std::vector<std::vector<std::size_t>> batches_;  // positions in rows_, shortest rows first
  std::vector<std::vector<std::size_t>> taken_;    // per worker, the batches it scored, in its order
};

/// A command run by the workers the environment names (torchrun's, `--nproc`'s): `run(sharing)`
/// with them sharing its work, or `run(nullptr)` when it names one process.
std::string run_by_workers(const std::function<std::string(const RowSharing*)>& run, std::chrono::seconds worker_timeout);
/// run_by_workers for a request that carries its `sharing`: `run(request)`, the request given the workers'.
template <class Request, class Run>
std::string run_shared(const Request& request, const Run& run, std::chrono::seconds worker_timeout) {
  return run_by_workers(
      [&](const RowSharing* sharing) {
        Request shared = request;
        shared.sharing = sharing;
        return run(shared);
      },
      worker_timeout);
}

}  // namespace attn::parallel
