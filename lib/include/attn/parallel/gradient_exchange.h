#pragma once
/// Data-parallel training's gradient exchange: every worker computes the loss of its share of each
/// global batch (share_of), weighted by its part of the batch, and after its backward pass one call
/// (GradientExchange::exchange) sums every trained parameter's gradient over the workers, so each
/// takes the optimizer step one process takes on the whole batch.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/types.h>

#include "attn/parallel/workers.h"

namespace attn::parallel {

/// Worker `rank`'s share of a batch of `rows` among `world` workers: every world-th row from `rank`
/// on. A length-bucketed batch comes sorted by length, so the shares are alike in width and tokens
/// (halves would give the last worker the longest rows); a batch smaller than the world leaves some none.
std::vector<std::int64_t> share_of(const std::vector<std::int64_t>& rows, int rank, int world);

class GradientExchange {
 public:
  /// The rows of the word-vector table that a batch's rows read (tasks::Dataset::word_ids).
  using WordIds = std::function<torch::Tensor(const std::vector<std::int64_t>& rows)>;
  /// `trained`: the parameters the optimizer updates (their gradients are summed in place);
  /// `word_table`: which of them is the word-vector table (SIZE_MAX: none), whose rows `word_ids`
  /// names; `sparse`: send an embedding table's gradient only in the rows some share touched when
  /// that halves its bytes (--sparse-gradients).
  GradientExchange(Workers& workers, std::vector<torch::Tensor> trained, std::size_t word_table, bool sparse, WordIds word_ids);

  struct Step {
    bool stop = false;  ///< some worker was asked to stop
    double bytes = 0;   ///< what this worker put into the step's collectives
  };
  /// The gradients summed over the workers. Dense, or with `sparse` an embedding
  /// table only in the rows some share touched (when that halves its bytes):
  /// - the word-vector table's rows come from the word ids of the global batch `rows`
  ///   (Dataset::word_ids), which every worker holds, so no worker asks the others. Each worker
  ///   then puts in only the rows its own share touched, and all of them gather everyone's
  ///   (gather_word_rows) when that moves fewer bytes than summing the rows of the whole batch:
  ///   always with two workers (a share touches ~60% of its batch's rows);
  /// - another table's rows are found by touched_rows (which also shares the stop flag).
  /// One collective a step, two with a table of the second kind; the step's loss and token sums
  /// stay with each worker (the trainer sums them once an epoch).
  /// `batch_rows` is the global batch; `stop` whether this worker was asked to stop. A worker whose
  /// share was empty counts zeros.
  Step exchange(const std::vector<std::int64_t>& batch_rows, bool stop);

 private:
  std::vector<torch::Tensor> touched_rows(const std::vector<torch::Tensor>& matrices, Step& t);
  torch::Tensor word_rows(const std::vector<std::int64_t>& batch) const;
  void gather_word_rows(Step& t, const std::vector<torch::Tensor>& own, std::int64_t most);
  /// With the word table the only row-sparse matrix: gathers each worker's own word rows when that
  /// moves fewer bytes than summing `all_rows` (the batch's); whether it did.
  bool gathered_word_rows(Step& t, const std::vector<std::int64_t>& batch_rows, const torch::Tensor& all_rows);
  /// Sums every gradient over the workers (rows_of[i]: the rows of parameter i sent, undefined:
  /// all of it), and the stop flag with them unless touched_rows shared it (`stop_shared`).
  void sum_gradients(Step& t, const std::vector<torch::Tensor>& rows_of, bool stop_shared);

  Workers& workers_;
  std::vector<torch::Tensor> trained_;
  std::size_t word_table_;
  bool sparse_;
  WordIds word_ids_;
  int world_;
};

}  // namespace attn::parallel
