//===- support/child_processes.cpp - Tools Kiln runs, and stopping them ---===//

#include "support/child_processes.h"

#include "support/forked_spawn.h"

#include <llvm/Support/Path.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <vector>

extern char **environ;

// glibc 2.29's: weak, so that where glibc lacks it (Kiln's wheel links
// against glibc 2.28) it is null and a child that needs a folder of its own
// starts by fork instead.
#pragma weak posix_spawn_file_actions_addchdir_np

namespace kiln::support {

namespace {

// The running children, in fixed slots: the signal handler reads them
// without locks or allocation. Zero is a free slot.
constexpr size_t maxChildren = 1024;
std::atomic<pid_t> children[maxChildren];
// Threads between deciding to start a child and recording it. The handler
// waits for them, so that no child starts unrecorded after it has looked.
std::atomic<int> starting{0};
std::atomic<bool> stopping{false};

bool record(pid_t pid) {
  for (std::atomic<pid_t> &slot : children) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pid))
      return true;
  }
  return false;
}

void forget(pid_t pid) {
  for (std::atomic<pid_t> &slot : children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0))
      return;
  }
}

/// Blocks the signals that stop Kiln in this thread while it lives: the
/// handler must not run on a thread that is between `starting` and record().
class BlockStopSignals {
public:
  BlockStopSignals() {
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
      sigaddset(&stopSignals, signal);
    pthread_sigmask(SIG_BLOCK, &stopSignals, &previous);
  }
  ~BlockStopSignals() { pthread_sigmask(SIG_SETMASK, &previous, nullptr); }

private:
  sigset_t previous;
};

llvm::Error spawnError(int error, llvm::StringRef program) {
  return llvm::createStringError(std::error_code(error, std::generic_category()),
                                 "cannot run %s (%s): %s",
                                 llvm::sys::path::filename(program).str().c_str(),
                                 program.str().c_str(), std::strerror(error));
}

llvm::Expected<pid_t> spawn(llvm::StringRef program, llvm::ArrayRef<std::string> argv,
                            llvm::StringRef standardOutputFile, llvm::StringRef standardErrorFile,
                            llvm::StringRef workingDirectory) {
  std::string programPath = program.str(), outPath = standardOutputFile.str(),
              errPath = standardErrorFile.str(), directory = workingDirectory.str();
  std::vector<char *> arguments;
  for (const std::string &argument : argv)
    arguments.push_back(const_cast<char *>(argument.c_str()));
  arguments.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  bool changesFolder = !directory.empty();
  bool spawnCanChangeFolder = &posix_spawn_file_actions_addchdir_np != nullptr;
  if (changesFolder && spawnCanChangeFolder)
    posix_spawn_file_actions_addchdir_np(&actions, directory.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // A group of its own, so that killing the group ends what the tool
  // started (nvcc runs cicc and ptxas); the mask and handlers of Kiln's
  // stop signals are not the child's business.
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
    sigaddset(&defaults, signal);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = 0;
  int error = 0;
  {
    BlockStopSignals blocked;
    starting.fetch_add(1);
    if (stopping.load())
      error = EINTR;
    else if (changesFolder && !spawnCanChangeFolder)
      error = spawnByForking({programPath.c_str(), arguments.data(), outPath.c_str(),
                              errPath.c_str(), directory.c_str()},
                             pid);
    else
      error =
          posix_spawn(&pid, programPath.c_str(), &actions, &attributes, arguments.data(), environ);
    if (!error && !record(pid)) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      error = EAGAIN;
    }
    starting.fetch_sub(1);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error)
    return spawnError(error, program);
  return pid;
}

/// Waits until `pid` has exited without reaping it: while it is a zombie its
/// number cannot be reused, so the handler never kills a stranger.
bool waitForExit(pid_t pid, std::optional<unsigned> timeoutSeconds) {
  if (!timeoutSeconds) {
    siginfo_t info;
    while (::waitid(P_PID, pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    return true;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*timeoutSeconds);
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    siginfo_t info;
    info.si_pid = 0;
    if (::waitid(P_PID, pid, &info, WEXITED | WNOWAIT | WNOHANG) != 0 && errno != EINTR)
      return true;
    if (info.si_pid == pid)
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

} // namespace

llvm::Expected<ChildExit> runChildProcess(llvm::StringRef program, llvm::ArrayRef<std::string> argv,
                                          llvm::StringRef standardOutputFile,
                                          llvm::StringRef standardErrorFile,
                                          std::optional<unsigned> timeoutSeconds,
                                          llvm::StringRef workingDirectory) {
  llvm::Expected<pid_t> pid =
      spawn(program, argv, standardOutputFile, standardErrorFile, workingDirectory);
  if (!pid)
    return pid.takeError();
  ChildExit result;
  result.timedOut = !waitForExit(*pid, timeoutSeconds);
  // The whole group goes, timed out or not: a tool's helpers must not
  // outlive it.
  ::kill(-*pid, SIGKILL);
  forget(*pid);
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status) && !result.timedOut)
    result.signal = WTERMSIG(status);
  return result;
}

void killChildProcesses() {
  stopping.store(true);
  while (starting.load() != 0) {
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, nullptr);
  }
  for (std::atomic<pid_t> &slot : children)
    if (pid_t pid = slot.load())
      ::kill(-pid, SIGKILL);
  for (std::atomic<pid_t> &slot : children)
    if (pid_t pid = slot.exchange(0))
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
}

} // namespace kiln::support
