#pragma once
/// The torch-free layers' one way to share work among threads (text, io, data: the tokenizer, padding,
/// skip-gram, the model file's checksums). The torch layers share theirs through parallel/threads.h,
/// on LibTorch's threads; these layers link no LibTorch, so they start their own.
#include <cstddef>
#include <functional>

namespace attn::text {

/// Calls work(w) for every w in [0, workers) at once: w = 0 on the calling thread, each other on a
/// thread of its own. Returns once every call has; then rethrows the error of the lowest w that threw
/// (the others' work runs to its end: stop them through what they share, if they must stop early).
/// With workers <= 1: work(0) on the calling thread.
void on_threads(std::size_t workers, const std::function<void(std::size_t w)>& work);

/// Calls body(begin, end) on `workers` contiguous ranges that cover [0, n) once (fewer workers when
/// n is smaller; none when n is 0), through on_threads.
void on_ranges(std::size_t n, std::size_t workers, const std::function<void(std::size_t begin, std::size_t end)>& body);

}  // namespace attn::text
