//===- driver/stop_signals.cpp - Cleaning up when kiln is stopped ---------===//

#include "driver/stop_signals.h"

#include "support/child_processes.h"
#include "support/process_scratch.h"

#include <atomic>
#include <signal.h>
#include <unistd.h>

namespace kiln::driver {

namespace {

constexpr int stopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

std::atomic<bool> stopping{false};

void onStopSignal(int signal) {
  // A second signal, on this thread or another, waits for the first one's
  // cleanup, which ends the process.
  if (stopping.exchange(true))
    while (true)
      ::pause();
  support::killChildProcesses();
  support::removeUnfinishedFiles();
  support::removeProcessScratchDirectory();
  // End as the signal ends a program, so that the parent sees which.
  ::signal(signal, SIG_DFL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(signal);
  ::_exit(128 + signal);
}

} // namespace

sigset_t ignoredStopSignals() {
  sigset_t ignored;
  sigemptyset(&ignored);
  for (int signal : stopSignals) {
    struct sigaction current;
    if (::sigaction(signal, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == SIG_IGN)
      sigaddset(&ignored, signal);
  }
  return ignored;
}

void installStopSignalHandlers(const sigset_t &ignored) {
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  for (int signal : stopSignals)
    sigaddset(&action.sa_mask, signal);
  for (int signal : stopSignals)
    if (!sigismember(&ignored, signal))
      ::sigaction(signal, &action, nullptr);
}

} // namespace kiln::driver
