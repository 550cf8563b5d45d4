//===- support/forked_spawn.cpp - Starting a child in a folder, by fork ---===//

#include "support/forked_spawn.h"

#include <cerrno>
#include <fcntl.h>
#include <initializer_list>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln::support {

namespace {

/// The child's end after a failure: errno to the parent, through `report`.
[[noreturn]] void reportFailure(int report) {
  int error = errno;
  ssize_t written = write(report, &error, sizeof error);
  (void)written;
  _exit(127);
}

/// The child's side, between fork and exec: only async-signal-safe calls,
/// since Kiln's other threads may have held locks at the fork.
[[noreturn]] void becomeChild(const SpawnRequest &request, int report) {
  auto fail = [report] { reportFailure(report); };
  if (setpgid(0, 0) != 0)
    fail();
  struct sigaction defaultAction = {};
  defaultAction.sa_handler = SIG_DFL;
  sigemptyset(&defaultAction.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
    sigaction(signal, &defaultAction, nullptr);

  struct Redirection {
    int descriptor;
    const char *path;
    int flags;
  };
  const Redirection redirections[] = {
      {0, "/dev/null", O_RDONLY},
      {1, request.standardOutputFile, O_WRONLY | O_CREAT | O_TRUNC},
      {2, request.standardErrorFile, O_WRONLY | O_CREAT | O_TRUNC},
  };
  for (const Redirection &redirection : redirections) {
    int opened = open(redirection.path, redirection.flags, 0600);
    if (opened < 0)
      fail();
    if (opened != redirection.descriptor) {
      if (dup2(opened, redirection.descriptor) < 0)
        fail();
      close(opened);
    }
  }
  if (chdir(request.workingDirectory) != 0)
    fail();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(request.program, request.argv, environ);
  reportFailure(report);
}

} // namespace

int spawnByForking(const SpawnRequest &request, pid_t &pid) {
  // The child reports a failure before exec through this pipe; exec closes
  // it, so the parent reads nothing once the program runs.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0)
    return errno;
  pid_t child = fork();
  if (child < 0) {
    int error = errno;
    close(report[0]);
    close(report[1]);
    return error;
  }
  if (child == 0) {
    close(report[0]);
    becomeChild(request, report[1]);
  }
  close(report[1]);
  int childError = 0;
  ssize_t got;
  do
    got = read(report[0], &childError, sizeof childError);
  while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof childError)) {
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return childError;
  }
  pid = child;
  return 0;
}

} // namespace kiln::support
