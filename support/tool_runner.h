//===- support/tool_runner.h - Running a CUDA command-line tool -*- C++ -*-===//
//
// Runs ptxas, fatbinary or nvcc to completion and hands back its exit status
// and what it printed. Standard input is empty; standard output and error
// go to temporary files that are read and removed before runTool returns.
// The tool runs as a child of child_processes.h, so a signal that stops Kiln
// stops it too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <string>

namespace kiln::support {

struct ToolOutput {
  int exitCode = 0;
  std::string standardOutput;
  std::string standardError;
};

/// Where a tool runs.
enum class ToolFolder {
  /// Kiln's working folder: relative paths among the arguments are the
  /// user's.
  Caller,
  /// An empty folder of its own: relative paths the tool finds in its
  /// inputs name nothing (ptxas reads the time and size of the sources
  /// that PTX `.file` directives name into its line tables).
  Scratch,
};

/// Runs `program` with `arguments` (argv[1...]) in `folder`. A tool that
/// runs and fails is a ToolOutput with a nonzero exitCode; an Error means it
/// could not be started, it crashed, or it ran past `timeoutSeconds` and was
/// stopped (the message says which, with what it printed).
llvm::Expected<ToolOutput> runTool(llvm::StringRef program, llvm::ArrayRef<std::string> arguments,
                                   std::optional<unsigned> timeoutSeconds = std::nullopt,
                                   ToolFolder folder = ToolFolder::Caller);

/// What the tool printed (standard error, then output), for an error message:
/// each line indented by two spaces, without blank lines, and with
/// `scratchDirectory/` removed from paths (files there have meaningful names;
/// the directory's random name means nothing to the user).
std::string indentedToolOutput(const ToolOutput &output, llvm::StringRef scratchDirectory);

} // namespace kiln::support
