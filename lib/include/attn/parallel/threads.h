#pragma once
/// Work shared among the threads LibTorch may use (at::get_num_threads(), which the apps set from
/// --threads). at::parallel_for runs its ranges on OpenMP threads only in a file compiled with
/// OpenMP; elsewhere it compiles to a plain loop. lib/'s files outside the kernels call these, which
/// are compiled with it, and the work also gets the caller's thread-local LibTorch state.
#include <cstddef>
#include <cstdint>
#include <functional>

namespace attn::parallel {

/// The threads work shared out here would run on: LibTorch's, or 1 inside a parallel region.
int available_threads();

/// Calls f(begin, end) on ranges that cover [0, n) once, each of at least `grain` indices (the
/// last may be shorter), at once on LibTorch's threads. Inside a parallel region (work these
/// functions or LibTorch already share out), with one thread, or when n <= grain: one call f(0, n).
void for_each_range(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t begin, std::int64_t end)>& f);

/// Calls f(i) for every i in [0, n), each on one thread, the threads taking the next i as they
/// free up (tasks of unequal cost: give the costly ones low i). Work a task shares out through
/// at::parallel_for runs inline on its own thread. Inside a parallel region, with one thread, or
/// when n < 2: in order on the calling thread.
void for_each_task(std::size_t n, const std::function<void(std::size_t i)>& f);

/// Both functions run f under the caller's thread-local LibTorch state (its gradient mode among it),
/// stop handing out work once a call throws, and rethrow the first error caught.

}  // namespace attn::parallel
