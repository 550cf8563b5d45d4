//===- support/forked_spawn.h - Starting a child in a folder, by fork -*- C++ -*-===//
//
// What child_processes.cpp asks of posix_spawn, done with fork and exec, for
// a C library that cannot change a spawned child's folder
// (posix_spawn_file_actions_addchdir_np is glibc 2.29's): Kiln's wheel runs
// on glibc 2.28.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/types.h>

namespace kiln::support {

/// How a child starts: the program and its argv (argv[0] included, ending
/// in a null pointer), standard input from /dev/null, standard output and
/// error into new files, in a folder of its own, in a process group of its
/// own, with no signal blocked and SIGINT, SIGTERM, SIGHUP, SIGQUIT and
/// SIGPIPE at their default actions.
struct SpawnRequest {
  const char *program;
  char *const *argv;
  const char *standardOutputFile;
  const char *standardErrorFile;
  const char *workingDirectory;
};

/// Starts the child `request` describes and stores its pid, or returns the
/// errno of what failed (opening a file, entering the folder, executing
/// the program), as posix_spawn does; then no child is left behind.
int spawnByForking(const SpawnRequest &request, pid_t &pid);

} // namespace kiln::support
