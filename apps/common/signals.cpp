// A long-running command's signals (see signals.h).
#include "signals.h"

#include <pthread.h>
#include <signal.h>

namespace attn::apps {
namespace {

sigset_t waited() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  return set;
}

}  // namespace

StopSignals::StopSignals() {
  sigset_t blocked = waited();
  sigaddset(&blocked, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
}

int StopSignals::wait(const std::function<void()>& hangup) const {
  const sigset_t set = waited();
  for (;;) {
    const int sig = sigwaitinfo(&set, nullptr);
    if (sig == SIGHUP && hangup) hangup();
    if (sig == SIGTERM || sig == SIGINT) return sig;
  }
}

}  // namespace attn::apps
