//===- backend/tool_runner.cpp - Running a CUDA command-line tool ---------===//

#include "backend/tool_runner.h"

#include "backend/temporary_directory.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FileUtilities.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <optional>

namespace kiln::cuda {

llvm::Expected<ToolOutput> runTool(llvm::StringRef program, llvm::ArrayRef<std::string> arguments) {
  llvm::SmallString<128> stdoutPath, stderrPath;
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile("kiln-tool-stdout", "txt", stdoutPath))
    return llvm::createStringError(error, "cannot create a temporary file: %s",
                                   error.message().c_str());
  llvm::FileRemover stdoutRemover(stdoutPath);
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile("kiln-tool-stderr", "txt", stderrPath))
    return llvm::createStringError(error, "cannot create a temporary file: %s",
                                   error.message().c_str());
  llvm::FileRemover stderrRemover(stderrPath);

  std::string toolName = llvm::sys::path::filename(program).str();
  std::vector<llvm::StringRef> argv{program};
  for (const std::string &argument : arguments)
    argv.push_back(argument);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(stdoutPath),
                                                llvm::StringRef(stderrPath)};
  std::string errorMessage;
  bool executionFailed = false;
  int status = llvm::sys::ExecuteAndWait(program, argv, /*Env=*/std::nullopt, redirects,
                                         /*SecondsToWait=*/0, /*MemoryLimit=*/0, &errorMessage,
                                         &executionFailed);
  if (executionFailed)
    return llvm::createStringError("cannot run %s (%s): %s", toolName.c_str(),
                                   program.str().c_str(), errorMessage.c_str());

  ToolOutput output;
  output.exitCode = status;
  if (llvm::Expected<std::string> text = readFileBytes(stdoutPath))
    output.standardOutput = std::move(*text);
  else
    return text.takeError();
  if (llvm::Expected<std::string> text = readFileBytes(stderrPath))
    output.standardError = std::move(*text);
  else
    return text.takeError();

  // ExecuteAndWait reports a crash (a signal) as -2 and a failed wait as -1.
  if (status < 0) {
    std::string message = toolName + " did not finish";
    if (!errorMessage.empty())
      message += ": " + errorMessage;
    llvm::StringRef printed = llvm::StringRef(output.standardError).trim();
    if (!printed.empty())
      message += "; it printed:\n" + printed.str();
    return llvm::createStringError(message);
  }
  return output;
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

} // namespace kiln::cuda
