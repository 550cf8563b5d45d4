//===- support/tool_runner.cpp - Running a CUDA command-line tool ---------===//

#include "support/tool_runner.h"

#include "support/child_processes.h"
#include "support/temporary_directory.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <cstring>

namespace kiln::support {

llvm::Expected<ToolOutput> runTool(llvm::StringRef program, llvm::ArrayRef<std::string> arguments,
                                   std::optional<unsigned> timeoutSeconds, ToolFolder folder) {
  llvm::Expected<TemporaryDirectory> scratch = TemporaryDirectory::create("kiln-tool");
  if (!scratch)
    return scratch.takeError();
  // The tool's folder holds nothing but what it prints.
  std::string workingDirectory;
  if (folder == ToolFolder::Scratch) {
    workingDirectory = scratch->file("cwd");
    if (std::error_code error = llvm::sys::fs::create_directory(workingDirectory))
      return llvm::createStringError(error, "cannot create the folder '%s' to run %s in: %s",
                                     workingDirectory.c_str(), program.str().c_str(),
                                     error.message().c_str());
  }
  std::string toolName = llvm::sys::path::filename(program).str();
  std::vector<std::string> argv{program.str()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  llvm::Expected<ChildExit> exit =
      runChildProcess(program, argv, scratch->file("stdout.txt"), scratch->file("stderr.txt"),
                      timeoutSeconds, workingDirectory);
  if (!exit)
    return exit.takeError();

  ToolOutput output;
  if (llvm::Expected<std::string> text = scratch->read("stdout.txt"))
    output.standardOutput = std::move(*text);
  else
    return text.takeError();
  if (llvm::Expected<std::string> text = scratch->read("stderr.txt"))
    output.standardError = std::move(*text);
  else
    return text.takeError();

  if (exit->exitCode) {
    output.exitCode = *exit->exitCode;
    return output;
  }
  std::string message =
      exit->timedOut ? toolName + " did not finish within " + std::to_string(*timeoutSeconds) +
                           " seconds and was stopped"
                     : toolName + " did not finish: it was killed by signal " +
                           std::to_string(exit->signal) + " (" + strsignal(exit->signal) + ")";
  llvm::StringRef printed = llvm::StringRef(output.standardError).trim();
  if (!printed.empty())
    message += "; it printed:\n" + printed.str();
  return llvm::createStringError(message);
}

std::string indentedToolOutput(const ToolOutput &output, llvm::StringRef scratchDirectory) {
  std::string printed = output.standardError + output.standardOutput;
  if (!scratchDirectory.empty()) {
    std::string prefix = scratchDirectory.str() + "/";
    for (size_t at = printed.find(prefix); at != std::string::npos; at = printed.find(prefix, at))
      printed.erase(at, prefix.size());
  }
  std::string text;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  llvm::StringRef(printed).split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (!line.trim().empty())
      text += "\n  " + line.rtrim().str();
  return text;
}

} // namespace kiln::support
