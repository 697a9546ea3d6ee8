#pragma once
/// A long-running command's signals (attn serve): SIGTERM and SIGINT stop it, SIGHUP asks it to
/// reload, SIGPIPE is ignored (a client gone mid-answer is an error from send). Taken by a thread
/// that waits for them, not by handlers: blocked before the command starts its threads, so every
/// thread inherits the mask.
#include <functional>

namespace attn::apps {

class StopSignals {
 public:
  /// Blocks SIGTERM, SIGINT, SIGHUP and SIGPIPE in this thread (and the threads it starts from now on).
  StopSignals();
  /// Waits until SIGTERM or SIGINT (returned), calling `hangup` at each SIGHUP meanwhile.
  int wait(const std::function<void()>& hangup) const;
};

}  // namespace attn::apps
