//===- tests/backend/tool_runner_test.cpp - Running tools that misbehave ---===//
//
// runTool against real programs that hang, crash or cannot start, and
// readFileBytes against files that are not regular: each is an error that
// says so, never a wait without end.
//
//===----------------------------------------------------------------------===//

#include "support/process_scratch.h"
#include "support/temporary_directory.h"
#include "support/tool_runner.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

#include <csignal>
#include <sys/stat.h>
#include <sys/types.h>

namespace kiln::cuda_tools {
namespace {

std::string messageOf(llvm::Error error) {
  return llvm::toString(std::move(error));
}

TEST(ToolRunner, AToolPastItsTimeoutIsStoppedWithWhatItStarted) {
  llvm::Expected<support::TemporaryDirectory> scratch =
      support::TemporaryDirectory::create("kiln-runner-test");
  ASSERT_TRUE(static_cast<bool>(scratch)) << messageOf(scratch.takeError());
  std::string pidFile = scratch->file("sleeper.pid");
  // The shell's child records its pid, then both wait.
  llvm::Expected<support::ToolOutput> output =
      support::runTool("/bin/sh", {"-c", "sleep 1000 & echo $! > '" + pidFile + "'; wait"}, 1);
  ASSERT_FALSE(static_cast<bool>(output)) << "a tool that never ends should be an error";
  std::string message = messageOf(output.takeError());
  EXPECT_NE(message.find("sh did not finish within 1 seconds and was stopped"), std::string::npos)
      << message;
  llvm::Expected<std::string> pid = scratch->read("sleeper.pid");
  ASSERT_TRUE(static_cast<bool>(pid)) << messageOf(pid.takeError());
  int sleeper = std::stoi(*pid);
  // Killed with its group; reaped by whoever adopted it, or a zombie.
  bool running = ::kill(sleeper, 0) == 0;
  if (running) {
    std::string stat;
    if (llvm::Expected<std::string> text =
            support::readFileBytes("/proc/" + std::to_string(sleeper) + "/stat"))
      stat = *text;
    else
      llvm::consumeError(text.takeError());
    running = !stat.empty() && stat[stat.rfind(')') + 2] != 'Z';
  }
  EXPECT_FALSE(running) << "the tool's child outlived the time-out";
}

TEST(ToolRunner, AToolKilledBySignalIsAnErrorNamingTheSignal) {
  llvm::Expected<support::ToolOutput> output =
      support::runTool("/bin/sh", {"-c", "echo oops >&2; kill -SEGV $$"});
  ASSERT_FALSE(static_cast<bool>(output));
  std::string message = messageOf(output.takeError());
  EXPECT_NE(message.find("sh did not finish: it was killed by signal 11"), std::string::npos)
      << message;
  EXPECT_NE(message.find("oops"), std::string::npos) << "what the tool printed is lost";
}

TEST(ToolRunner, AToolThatCannotStartIsNamed) {
  llvm::Expected<support::ToolOutput> output =
      support::runTool("/nonexistent/ptxas", {"--version"});
  ASSERT_FALSE(static_cast<bool>(output));
  std::string message = messageOf(output.takeError());
  EXPECT_EQ(message, "cannot run ptxas (/nonexistent/ptxas): No such file or directory");
}

TEST(ToolRunner, AToolRunInItsOwnFolderFindsNothingOfTheCallers) {
  llvm::SmallString<256> callerFolder;
  ASSERT_FALSE(llvm::sys::fs::current_path(callerFolder));
  llvm::Expected<support::ToolOutput> caller = support::runTool("/bin/sh", {"-c", "pwd"});
  ASSERT_TRUE(static_cast<bool>(caller)) << messageOf(caller.takeError());
  EXPECT_EQ(caller->standardOutput, std::string(callerFolder) + "\n");

  llvm::Expected<support::ToolOutput> own = support::runTool(
      "/bin/sh", {"-c", "pwd; ls -A | wc -l"}, std::nullopt, support::ToolFolder::Scratch);
  ASSERT_TRUE(static_cast<bool>(own)) << messageOf(own.takeError());
  llvm::StringRef printed(own->standardOutput);
  auto [folder, entries] = printed.split('\n');
  EXPECT_NE(folder, llvm::StringRef(callerFolder)) << "the tool ran in Kiln's folder";
  EXPECT_EQ(entries.trim(), "0") << "the tool's folder is not empty: " << own->standardOutput;
  EXPECT_FALSE(llvm::sys::fs::exists(folder)) << "the tool's folder outlived it: " << folder.str();
}

TEST(ToolRunner, ToolRunsLeaveNothingInTheProcessFolder) {
  llvm::Expected<support::ToolOutput> output =
      support::runTool("/bin/sh", {"-c", "echo out; echo err >&2"});
  ASSERT_TRUE(static_cast<bool>(output)) << messageOf(output.takeError());
  EXPECT_EQ(output->standardOutput, "out\n");
  EXPECT_EQ(output->standardError, "err\n");
  llvm::Expected<std::string> folder = support::processScratchDirectory();
  ASSERT_TRUE(static_cast<bool>(folder)) << messageOf(folder.takeError());
  std::error_code error;
  llvm::sys::fs::directory_iterator entry(*folder, error);
  EXPECT_FALSE(error) << error.message();
  EXPECT_EQ(entry, llvm::sys::fs::directory_iterator()) << "left behind: " << entry->path();
}

TEST(ReadFileBytes, RefusesWhatIsNotARegularFile) {
  llvm::Expected<support::TemporaryDirectory> scratch =
      support::TemporaryDirectory::create("kiln-runner-test");
  ASSERT_TRUE(static_cast<bool>(scratch)) << messageOf(scratch.takeError());
  std::string fifo = scratch->file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string &path : {fifo, std::string("/dev/zero")}) {
    llvm::Expected<std::string> bytes = support::readFileBytes(path);
    ASSERT_FALSE(static_cast<bool>(bytes)) << path << " was read";
    EXPECT_EQ(messageOf(bytes.takeError()), "cannot read '" + path + "': not a regular file");
  }
}

} // namespace
} // namespace kiln::cuda_tools
