//===- tests/support/forked_spawn_test.cpp --------------------------------===//

#include "support/forked_spawn.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using kiln::support::spawnByForking;
using kiln::support::SpawnRequest;

namespace {

class ForkedSpawn : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/kiln-forked-spawn-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    folder = pattern;
    out = folder + "/out.txt";
    err = folder + "/err.txt";
  }
  void TearDown() override {
    std::string command = "rm -rf '" + folder + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  /// Runs `script` under /bin/sh in `folder`, waits, and returns its exit
  /// status (or -1 when it could not start, with the errno in `error`).
  int runShell(const std::string &script, const char *directory, int &error) {
    std::string shell = "/bin/sh", flag = "-c", text = script;
    char *argv[] = {shell.data(), flag.data(), text.data(), nullptr};
    pid_t pid = 0;
    error = spawnByForking({"/bin/sh", argv, out.c_str(), err.c_str(), directory}, pid);
    if (error)
      return -1;
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "the child did not exit by itself";
    return WEXITSTATUS(status);
  }

  static std::string contents(const std::string &path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  std::string folder, out, err;
};

TEST_F(ForkedSpawn, RunsInTheFolderWithItsOutputInTheFiles) {
  int error = 0;
  int status =
      runShell("pwd; echo to-error >&2; read line || echo no-input; exit 3", folder.c_str(), error);
  ASSERT_EQ(error, 0) << "could not start /bin/sh: " << strerror(error);
  EXPECT_EQ(status, 3);
  char resolved[PATH_MAX];
  ASSERT_NE(realpath(folder.c_str(), resolved), nullptr);
  EXPECT_EQ(contents(out), std::string(resolved) + "\nno-input\n")
      << "the child ran elsewhere or read standard input from somewhere other than /dev/null";
  EXPECT_EQ(contents(err), "to-error\n");
}

TEST_F(ForkedSpawn, LeadsAProcessGroupOfItsOwn) {
  int error = 0;
  // $$ is the shell's pid; ps is not everywhere, /proc/self/stat is.
  int status = runShell("read -r stat < /proc/self/stat; set -- $stat; "
                        "[ \"$5\" = \"$$\" ] || exit 9",
                        folder.c_str(), error);
  ASSERT_EQ(error, 0);
  EXPECT_EQ(status, 0) << "the child is not the leader of a process group of its own";
}

TEST_F(ForkedSpawn, StartsWithStopSignalsUnblockedAndAtTheirDefaults) {
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &blocked, &previous), 0);
  struct sigaction ignore = {}, previousAction;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &previousAction), 0);
  int error = 0;
  // A shell that receives SIGTERM at its default action dies of it.
  std::string script = "kill -TERM $$; exit 0";
  std::string shell = "/bin/sh", flag = "-c";
  char *argv[] = {shell.data(), flag.data(), script.data(), nullptr};
  pid_t pid = 0;
  error = spawnByForking({"/bin/sh", argv, out.c_str(), err.c_str(), folder.c_str()}, pid);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  sigaction(SIGPIPE, &previousAction, nullptr);
  ASSERT_EQ(error, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
      << "the child inherited Kiln's blocked SIGTERM";
}

TEST_F(ForkedSpawn, ReportsAMissingProgramAsPosixSpawnDoes) {
  std::string name = "no-such-program";
  char *argv[] = {name.data(), nullptr};
  pid_t pid = 0;
  std::string program = folder + "/no-such-program";
  int error =
      spawnByForking({program.c_str(), argv, out.c_str(), err.c_str(), folder.c_str()}, pid);
  EXPECT_EQ(error, ENOENT);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a failed start left a child behind";
}

TEST_F(ForkedSpawn, ReportsAMissingFolder) {
  int error = 0;
  std::string missing = folder + "/missing";
  EXPECT_EQ(runShell("exit 0", missing.c_str(), error), -1);
  EXPECT_EQ(error, ENOENT);
}

TEST_F(ForkedSpawn, ReportsAnOutputFileItCannotCreate) {
  out = folder + "/missing/out.txt";
  int error = 0;
  EXPECT_EQ(runShell("exit 0", folder.c_str(), error), -1);
  EXPECT_EQ(error, ENOENT);
}

} // namespace
